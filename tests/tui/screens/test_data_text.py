"""Text from outside escaped for Textual's markup shows as written, tags, variables and
backslashes included, and holds no control character."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ranktop.tui.screens.data_text import escaped
from textual.content import Content

CORPUS = ["[/]", "gpu-node-000[/]", "[@click=app.quit]x[/]", "[bold", "[b]x[/b]",
          "[link=https://evil.example]docs[/link]", "[#ff0000]red", "a\\", "a\\[/]", "\\\\[b]",
          "[$accent]x", "[$nope]x", "[]", "[1]: x", "plain text"]


def shown(markup: str) -> Content:
    return Content.from_markup(markup)


@pytest.mark.parametrize("text", CORPUS)
def test_markup_from_outside_shows_as_written_with_no_style_or_action(text):
    content = shown(escaped(text))
    assert content.plain == text and not content.spans


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.text(alphabet="[]\\/$@=#ab ", max_size=16))
def test_any_brackets_and_backslashes_show_as_written(text):
    assert shown(escaped(text)).plain == text


def test_controls_are_made_visible_and_a_long_text_cut():
    assert escaped("host\x1b]52;c;eA==\x07[/]") == "host\ufffd]52;c;eA==\ufffd\\[/]"
    assert shown(escaped("x" * 300, 10)).plain == "xxxxxxxxxx… [290 more characters]"
