"""Heatmap levels: a metric's values quantised into a few levels, healthy end first.

Level 0 is the healthy end of a metric and ``LEVELS - 1`` its bad end, whichever direction
is bad; past the scale come the levels of stale cells, cells without data and empty places.
The colours and glyphs of each level are the widgets' (``ranktop.widgets.palette``).

Pure: no Textual, no Rich, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

LEVELS = 8
# Past the scale, in the order a node's worst GPU is chosen: stale, then missing.
STALE = LEVELS  # a rank whose newest data is too old to trust
MISSING = LEVELS + 1  # a rank with no data
EMPTY = LEVELS + 2  # no rank here (past the end of a partly filled column)

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
    # no scale to place values on (none known, or past a float's range): all at ``low``
    scale = LEVELS / span if 0 < span < math.inf else 0.0
    flip = bad == "low"
    top = LEVELS - 1
    levels = []
    for value, before in zip(values, previous, strict=True):
        if value != value:
            levels.append(MISSING)
            continue
        position = (value - low) * scale if scale else 0.0  # in levels, clamped below
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
