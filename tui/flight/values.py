"""A dump's values, whatever their type, as the reader keeps them: strings made safe to show
and cut short, numbers from ints or the JSON variant's strings."""

from __future__ import annotations

import re
from typing import Any

from ..core.text import plain

SHORT = 200  # characters kept of any string from a dump


def text(value: Any) -> str:
    """A string, number or nothing as short, displayable text ("" for anything else)."""
    if not isinstance(value, str):
        value = str(value) if isinstance(value, int | float) else ""
    return plain(value[:SHORT * 2], SHORT)


def number(value: Any) -> int | None:
    """An int, or a string of one (the JSON variant's ``pg_status``); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,18}", value.strip()):
        return int(value)
    return None
