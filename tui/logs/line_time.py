"""When a log line was written, from the timestamp its writer put at its head.

The stamps of the formats ranktop reads (data-contracts §3):

- NCCL 2.26+ WARN lines (and Megatron-style progress lines): ``[2026-03-14 02:00:31] ``,
  the seconds perhaps with a fraction (``NCCL_DEBUG_TIMESTAMP_FORMAT``'s ``%Nf``);
- Python's logging and ISO 8601: ``2026-03-14 02:00:31,123``, ``2026-03-14T02:00:31.123``;
- PyTorch's glog-style header ``[E0314 02:00:31.123456789 ProcessGroupNCCL.cpp:632]`` and
  glog's own ``E0314 02:00:31.123456 48211 file.cc:89]``, which carry no year: theirs is
  the year that puts the line nearest ``near`` (the stamp of a line written about then, or
  now).

Every one is the writing node's local time with no zone. A rank's processes share that
clock, so the stamps order a rank's lines; ranktop compares them with nothing else. Times
are given as seconds on that clock read as if it were UTC (``local_clock`` turns a POSIX
time into the same scale). Launcher prefixes come first (``3: [default3]:[rank11]:``), so
a stamp is looked for in a line's first ``HEAD_CHARS`` characters.
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Sequence

HEAD_CHARS = 80
_DATED = re.compile(
    r"(?<!\d)(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(?!\d)")
_GLOG = re.compile(r"(?<![\w])[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?!\d)")


def local_clock(epoch: float) -> float:
    """A POSIX time on the scale of the stamps: this machine's local time, read as UTC."""
    return float(calendar.timegm(time.localtime(epoch))) + epoch % 1


def line_time(text: str, near: float) -> float | None:
    """The time stamped at the head of ``text``, or None when it carries none."""
    head = text[:HEAD_CHARS]
    found = [m for m in (_DATED.search(head), _GLOG.search(head)) if m is not None]
    if not found:
        return None
    first = min(found, key=lambda m: m.start())
    if first.re is _DATED:
        return _seconds(*map(int, first.groups()[:6]), first.group(7))
    return _without_year(first, near)


def _without_year(stamp: re.Match[str], near: float) -> float | None:
    """A glog stamp in the year that puts it nearest ``near``."""
    year = time.gmtime(near).tm_year
    fields = [int(field) for field in stamp.groups()[:5]]
    found = [_seconds(y, *fields, stamp.group(6)) for y in (year - 1, year, year + 1)]
    return min((s for s in found if s is not None), key=lambda s: abs(s - near), default=None)


def _seconds(year: int, month: int, day: int, hour: int, minute: int, second: int,
             fraction: str | None) -> float | None:
    """The stamp's seconds; None for a date no clock shows (a 13th month, hour 25)."""
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60
            and second <= 60):
        return None
    whole = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    return whole + (int(fraction) / 10 ** len(fraction) if fraction else 0.0)


def lines_until(lines: Sequence[str], until: float) -> list[str]:
    """``lines`` as they stood at ``until`` (POSIX seconds): those before the first one
    stamped after it (the unstamped lines that follow a stamped one are its own)."""
    return list(lines[:first_after(lines, until)])


def first_after(lines: Sequence[str], until: float) -> int:
    """The index of the first of ``lines`` stamped after ``until`` (POSIX seconds), or
    their number when none is."""
    last = local_clock(until)
    near = last
    for index, text in enumerate(lines):
        stamp = line_time(text, near)
        if stamp is not None:
            if stamp > last:
                return index
            near = stamp
    return len(lines)
