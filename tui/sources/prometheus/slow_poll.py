"""What a slow poll says of itself: how long it took, and which query it waited on longest.

The header has room for a few words (it is cut at the pane's width): the poll's time and
the slowest query, in the status's message.
"""

from __future__ import annotations

from ...core.model import QueryTime

SLOW_SECONDS = 5.0  # a poll longer than this (or than a refresh, where longer) is slow
NAMED_FROM_SECONDS = 0.1  # a slowest query quicker than this is not worth naming


def is_slow(took: float, refresh: float) -> bool:
    """Whether a poll that took ``took`` seconds is slow, for a refresh of ``refresh``."""
    return took > max(SLOW_SECONDS, refresh)


def slow_words(took: float, slowest: QueryTime | None) -> str:
    """"slow: the poll took 20.3 s, 12.1 s of it waiting on sm_active"."""
    said = f"slow: the poll took {took:.1f} s"
    if slowest is not None and slowest.seconds >= NAMED_FROM_SECONDS:
        said += f", {slowest.seconds:.1f} s of it waiting on {slowest.asked_for}"
    return said

