"""The help screen and the keys tables of the README (and the rank screen's page in docs/)
list the same keys, screen by screen."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from ranktop.tui.screens.help import HelpScreen
from textual.binding import Binding

from tests.tui.conftest import make_app, screen_text

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
RANK_PAGE = ROOT / "docs" / "rank-screen.md"
# How the README writes keys, in Textual's names of them.
WORDS = {"arrows": ("up", "down", "left", "right"), "Enter": ("enter",), "Esc": ("escape",),
         "PgUp": ("pageup",), "PgDn": ("pagedown",), "Home": ("home",), "End": ("end",),
         "↑": ("up",), "↓": ("down",),
         "/": ("slash",), "?": ("question_mark",), "[": ("left_square_bracket",),
         "]": ("right_square_bracket",), ",": ("comma",), ".": ("full_stop",),
         "<": ("less_than_sign",), ">": ("greater_than_sign",), "{": ("left_curly_bracket",),
         "}": ("right_curly_bracket",), "@": ("at",),
         "(": ("left_parenthesis",), ")": ("right_parenthesis",)}


def readme_keys(page: Path, heading: str) -> set[str]:
    """The keys in the first column of the table under ``heading`` in ``page``."""
    text = page.read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1]
    rows = section.split("\n| key | what it does |\n", 1)[1].split("\n\n", 1)[0]
    keys: set[str] = set()
    for row in rows.splitlines()[1:]:
        cell = row.split("|")[1]
        tokens = re.findall(r"`([^`]+)`", cell) + (["arrows"] if "arrows" in cell else [])
        for token in tokens:
            keys.update(WORDS.get(token, (token,)))
    return keys


async def help_keys(keys: list[str], everywhere: bool) -> set[str]:
    """The keys the help screen lists after ``keys`` are pressed, as declared; with or
    without those of its "Everywhere" group."""
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        await pilot.press(*keys, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        return {key.strip() for title, bindings in app.screen.groups() for binding in bindings
                if isinstance(binding, Binding) and (everywhere or title != "Everywhere")
                for key in binding.key.split(",")}


@pytest.mark.parametrize("page,heading,keys,everywhere", [
    (README, "## Keys", [], True),  # the cluster screen, and the keys that work everywhere
    (RANK_PAGE, "## One rank: `Enter`", ["enter"], False),  # the rank screen and its log
])
async def test_the_readme_lists_the_keys_the_help_screen_lists(page, heading, keys,
                                                                everywhere):
    assert readme_keys(page, heading) == await help_keys(keys, everywhere)


async def test_the_help_screen_scrolls_with_j_k_g_and_G():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.poll_once()
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        box = app.screen.query_one("#help-box")
        assert box.max_scroll_y > 0  # longer than the screen
        await pilot.press("G")
        assert box.scroll_y == box.max_scroll_y
        await pilot.press("k")
        assert box.scroll_y == box.max_scroll_y - 1
        await pilot.press("g", "j")
        assert box.scroll_y == 1
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_the_help_screen_says_the_sources_detail_the_header_points_to():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        status = app.cluster.status
        app.cluster.status = replace(status, detail="ranks from labels, DCGM 512/512; "
                                                    "`ranktop check-config` suggests x")
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        assert "The data source" in text
        assert "DCGM 512/512" in text and "`ranktop check-config` suggests x" in text
