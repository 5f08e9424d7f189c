"""Property tests: any bytes at all are made safe to show, and every line has a kind."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.core.text import classify, clean_lines, plain, sanitise

from tests.tui.properties import FEW, LINES, RAW_LINES

KINDS = {"watchdog", "net", "nccl_warn", "error", "nccl_info", "plain"}
# What a terminal would act on: controls (tab aside), line breaks, bidi overrides, surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f"
                     "\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@FEW
@given(RAW_LINES, st.integers(1, 300))
def test_sanitised_text_holds_no_control_and_keeps_to_its_width(raw, width):
    text = sanitise(raw, width)
    assert _UNSAFE.search(text) is None
    text.encode("utf-8")
    shown = text.split("… [", 1)[0]
    assert len(shown) <= width


@FEW
@given(st.lists(RAW_LINES, max_size=8), st.integers(1, 300))
def test_many_lines_at_once_read_as_one_at_a_time(raws, width):
    raws = [raw.replace(b"\n", b"") for raw in raws]
    assert clean_lines(raws, width) == [sanitise(raw, width) for raw in raws]


@FEW
@given(LINES, st.integers(1, 200))
def test_plain_text_is_one_printable_line(text, width):
    shown = plain(text, width)
    assert _UNSAFE.search(shown) is None and "\t" not in shown
    assert len(shown.split("… [", 1)[0]) <= width


@FEW
@given(RAW_LINES)
def test_every_sanitised_line_has_a_known_kind(raw):
    assert classify(sanitise(raw)) in KINDS
