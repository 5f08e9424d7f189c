"""Colour scale: values quantised into a few levels, drawn from a fixed table of styles.

Level 0 is the healthy end of a metric and the last level its bad ("hot") end, whichever
direction is bad. Colours are exact xterm-256 entries so truecolor, 256-colour terminals
and tmux's own down-sampling all show the same picture. "No data" and the cursor have
colours of their own, outside the scale. Without colour (NO_COLOR) each level is a glyph
of increasing density instead.

The styles are pre-built here rather than declared as component classes in the stylesheet like
the widgets' text: a half-block cell shows two levels at once (foreground over background), so
its style is one of a table of level pairs built from the one list of colours, looked up per
cell of a map of up to 16k ranks on every repaint; the legend's swatches read the same table.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from rich.color import Color
from rich.style import Style

# Cool to hot: calm blues and greens for healthy cells, orange and red for bad ones.
SCALE_COLORS = (24, 30, 35, 106, 178, 208, 202, 196)
LEVELS = len(SCALE_COLORS)
# Past the scale, in the order a node's worst GPU is chosen: stale, then missing.
STALE = LEVELS  # a rank whose newest data is too old to trust
MISSING = LEVELS + 1  # a rank with no data
CURSOR = LEVELS + 2  # the selected rank
EMPTY = LEVELS + 3  # no rank here (past the end of a partly filled column)
STALE_COLOR = 60
MISSING_COLOR = 244
CURSOR_COLOR = 201
CURSOR_MARK_COLOR = 231

SCALE_GLYPHS = (" ", "·", ":", "░", "▒", "▒", "▓", "█")
MISSING_GLYPH = "×"
STALE_GLYPH = "?"
EMPTY_GLYPH = " "

# A value must pass a bucket edge by this share of a bucket before its level changes,
# so noise around an edge does not repaint the row on every poll.
HYSTERESIS = 0.3


def quantise(value: float, low: float, high: float, bad: str, previous: int = -1) -> int:
    """The level of ``value`` on a ``low``..``high`` scale; MISSING for NaN.

    ``previous`` is the level the cell showed last; it is kept while the value stays within
    the hysteresis margin of that bucket.
    """
    return quantise_all([value], low, high, bad, [previous])[0]


def quantise_all(values: Sequence[float], low: float, high: float, bad: str,
                 previous: Sequence[int]) -> list[int]:
    """``quantise`` for a whole map at once: one tight loop, as a map may hold 16k ranks."""
    span = high - low
    scale = LEVELS / span if span > 0 else 0.0
    flip = bad == "low"
    top = LEVELS - 1
    levels = []
    for value, before in zip(values, previous, strict=True):
        if value != value:
            levels.append(MISSING)
            continue
        position = (value - low) * scale  # in levels, clamped to 0..LEVELS below
        if position < 0.0:
            position = 0.0
        elif position > LEVELS:
            position = float(LEVELS)
        if flip:
            position = LEVELS - position
        level = int(position)
        if level > top:
            level = top
        if level != before and 0 <= before < LEVELS and (
                before - HYSTERESIS <= position <= before + 1 + HYSTERESIS):
            level = before
        levels.append(level)
    return levels


def color_number(level: int) -> int | None:
    """The xterm-256 colour of a level, or None for an empty cell."""
    if level < LEVELS:
        return SCALE_COLORS[level]
    return {STALE: STALE_COLOR, MISSING: MISSING_COLOR, CURSOR: CURSOR_COLOR}.get(level)


@cache
def _color(level: int) -> Color | None:
    number = color_number(level)
    return None if number is None else Color.from_ansi(number)


@cache
def half_block_style(top: int, bottom: int) -> Style:
    """The style of a "▀" character whose top half shows ``top`` and bottom half ``bottom``."""
    return Style.from_color(_color(top), _color(bottom))


@cache
def block_style(level: int) -> Style:
    """The style of a whole-character cell: the level's colour as background."""
    return Style.from_color(None, _color(level))


@cache
def cursor_block_style(level: int) -> Style:
    """The style of the selected whole-character cell: a bright mark over its own colour."""
    return Style.from_color(Color.from_ansi(CURSOR_MARK_COLOR), _color(level)) + Style(bold=True)


@cache
def glyph(level: int) -> str:
    """The character that stands for a level when there is no colour."""
    if level < LEVELS:
        return SCALE_GLYPHS[level]
    return {STALE: STALE_GLYPH, MISSING: MISSING_GLYPH}.get(level, EMPTY_GLYPH)


@cache
def glyph_style(level: int) -> Style:
    """The style of a glyph cell: plain, or reversed for the cursor."""
    return Style(reverse=True) if level == CURSOR else Style()
