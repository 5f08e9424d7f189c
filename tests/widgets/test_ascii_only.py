"""Each mark, block and box character has an ASCII stand-in as wide as itself."""

from __future__ import annotations

import ast
from pathlib import Path

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


def own_characters() -> dict[str, str]:
    """Each character outside ASCII in ranktop's own strings (docstrings aside), with a file
    that writes it."""
    root = Path(__file__).resolve().parents[2]
    found: dict[str, str] = {}
    for path in sorted([*(root / "tui").rglob("*.py"), *(root / "widgets").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                           ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in docstrings):
                for char in node.value:
                    if not char.isascii():
                        found.setdefault(char, path.name)
    return found


def test_every_character_of_ranktops_own_outside_ascii_has_a_stand_in():
    own = own_characters()
    assert "⇒" in own and "●" in own  # the scan sees the marks
    missing = {char: where for char, where in own.items()
               if "?" in stand_in(char) and char != "\ufffd"}  # U+FFFD is "?" on purpose
    assert missing == {}
