"""Property tests: any label value is quoted so that PromQL reads back the same value, and
only names PromQL allows pass as metric or label names (ValueError otherwise)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.sources.prometheus.promql import (
    is_label_name,
    label_name,
    metric_name,
    quote,
    selector,
)

from tests.tui.properties import FEW

_ESCAPE = {"\\": "\\", '"': '"', "n": "\n", "'": "'", "t": "\t", "r": "\r"}
_PROMQL_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def unquote(literal: str) -> str:
    """A double-quoted PromQL string literal read as Prometheus's lexer reads it."""
    match = _PROMQL_STRING.fullmatch(literal)
    assert match is not None, f"not one PromQL string: {literal!r}"
    return re.sub(r"\\(u[0-9a-f]{4}|.)", _unescape, match.group(1))


def _unescape(escape: re.Match[str]) -> str:
    code = escape.group(1)
    return chr(int(code[1:], 16)) if len(code) == 5 else _ESCAPE[code]


@FEW
@given(st.text())
def test_a_quoted_value_reads_back_the_same(value):
    assert unquote(quote(value)) == value


@FEW
@given(st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), st.text(),
                       max_size=4))
def test_a_selector_holds_each_label_once_with_its_value(labels):
    text = selector(labels)
    assert text.startswith("{") and text.endswith("}")
    found = dict(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\\n]|\\.)*")', text))
    assert {name: unquote(literal) for name, literal in found.items()} == labels


@FEW
@given(st.one_of(st.text(max_size=12), st.text(max_size=8).map(lambda s: s + "\n")))
def test_a_name_is_checked_or_refused_with_value_error(name):
    for check in (metric_name, label_name):
        try:
            assert check(name) == name
        except ValueError as error:
            assert repr(name) in str(error)
    assert is_label_name(name) == bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name))


@pytest.mark.parametrize("name", ["up\n", "up{}", 'x"', "", "1x", "a b", "ü"])
def test_names_promql_cannot_take_are_refused(name):
    with pytest.raises(ValueError):
        metric_name(name)
