"""ASCII-only drawing for a terminal whose locale is not UTF-8: every line the console draws
passes through one filter that puts an ASCII character in place of each other one, cell for
cell, so nothing moves. Marks and blocks take their stand-ins from one table; box drawing
becomes ``+-|`` (as Textual's ``ascii`` border); anything else, outside text included, ``?``.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from rich.cells import cell_len
from rich.color import Color
from rich.segment import Segment
from textual.filter import LineFilter

# Each mark, block and sign the console draws, and what stands for it in ASCII.
STAND_INS = {
    "●": "*", "◌": "o", "▲": "^", "◆": "@", "▶": ">", "✓": "+", "…": "~", "·": ".",
    "→": ">", "↳": ">", "←": "<", "↑": "^", "↓": "v", "—": "-", "–": "-", "×": "x",
    "°": "'", "≥": ">", "≤": "<", "⇒": ">", "±": "+", "◇": "=",
    "�": "?", "•": "*", "▼": "v", "◀": "<", "▸": ">", "▾": "v",
    "🔎": "> ",  # the command palette's prompt, two cells wide
    # the NO_COLOR density ramp ` ·:░▒▓█`, then the sparkline bars, lowest first
    "░": "-", "▒": "=", "▓": "%", "█": "#",
    "▁": "_", "▂": ".", "▃": "-", "▄": "=", "▅": "+", "▆": "*", "▇": "%",
    "▀": '"', "▔": "-", "▌": "|", "▐": "|", "▍": "|", "▎": "|", "▏": "|", "▊": "|", "▋": "|",
    "▉": "|",
}


@lru_cache(maxsize=4096)  # bounded: outside text may bring any character
def stand_in(char: str) -> str:
    """The ASCII for one character, as many cells wide as the character itself."""
    if char.isascii():
        return char
    if char in STAND_INS:
        return STAND_INS[char]
    name = unicodedata.name(char, "")
    if name.startswith("BOX DRAWINGS"):
        return _box_stand_in(name)
    return "?" * cell_len(char)


def _box_stand_in(name: str) -> str:
    """``+`` where lines meet or turn, else ``-`` or ``|`` along the line."""
    if " AND " in name or " ARC " in name or "DIAGONAL" in name:
        return "+"
    if name.endswith(("HORIZONTAL", "LEFT", "RIGHT")):
        return "-"
    return "|" if name.endswith(("VERTICAL", "UP", "DOWN")) else "+"


def to_ascii(text: str) -> str:
    """``text`` with each character put into ASCII, cell for cell."""
    return text if text.isascii() else "".join(stand_in(char) for char in text)


class AsciiOnly(LineFilter):
    """The line filter that makes every drawn line ASCII."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [
            segment if segment.text.isascii()
            else Segment(to_ascii(segment.text), segment.style, segment.control)
            for segment in segments
        ]


def ascii_only(app: object) -> bool:
    """Whether a Textual app draws with ASCII only."""
    filters = app.get_line_filters()  # type: ignore[attr-defined]
    return any(isinstance(line_filter, AsciiOnly) for line_filter in filters)
