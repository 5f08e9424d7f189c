"""Each mark, block and box character has an ASCII stand-in as wide as itself."""

from __future__ import annotations

from ranktop.tui.screens.cluster_lines import ALARM_MARK
from ranktop.widgets import heatmap, legend, palette, trend
from ranktop.widgets.ascii_only import stand_in, to_ascii
from rich.cells import cell_len

MARKS = (*palette.SCALE_GLYPHS, palette.MISSING_GLYPH, *trend.BLOCKS, legend.SWATCH,
         heatmap.CURSOR_MARK, heatmap.ANOMALY_MARK, ALARM_MARK, "●", "◌", "✓", "…", "·", "→")


def test_every_mark_the_console_draws_has_its_own_stand_in():
    for mark in MARKS:
        assert stand_in(mark).isascii() and stand_in(mark) != "?", mark


def test_the_density_ramp_and_the_bars_keep_their_order_of_levels():
    assert to_ascii("".join(palette.SCALE_GLYPHS)) == " .:-==%#"
    assert to_ascii(trend.BLOCKS) == " _.-=+*%#"


def test_boxes_become_plus_minus_and_bar():
    assert to_ascii("╭─┬─╮│┃━╰┴╯╸━╺") == "+-+-+||-+++---"


def test_anything_else_is_a_question_mark_per_cell():
    text = "GPU 日本 ok é"
    assert to_ascii(text) == "GPU ???? ok ?"
    assert cell_len(to_ascii(text)) == cell_len(text)
