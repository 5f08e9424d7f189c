"""Past moments: reading the time a user typed (``--at``, the jump prompt) and saying one.

Accepted, in the user's local time zone unless the text names one:

- ``2026-11-24T03:12:40Z``, ``2026-11-24 03:12:40+01:00``, ``2026-11-24T03:12`` (ISO 8601);
- ``03:12`` or ``03:12:40``: that time today, or yesterday when today's is still to come;
- ``-15m``, ``-90s``, ``-2h``, ``-1h30m``, ``-1d``: that long before now;
- ``1795000000`` (a Unix time, seconds; a fraction allowed).

A time still to come is refused: there is nothing there to show yet; so is one before 1970
(``EARLIEST``), which no backend holds, and any text too large to be a time. Whatever the
text, the answer is a moment or one line that says why not (``MomentError``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo

from .text import plain

UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_AGO = re.compile(r"-((?:\d+(?:\.\d+)?[smhd])+)")
_AGO_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")
_UNIX = re.compile(r"\d{9,11}(?:\.\d+)?")
FUTURE_SLACK_SECONDS = 5.0  # clocks of the login node and the backend differ a little
EARLIEST = 0.0  # 1970-01-01T00:00:00Z: Prometheus keeps milliseconds since then
LATEST = 7_258_118_400.0  # 2200-01-01T00:00:00Z: past any backend's data, in every zone
SHOWN_TEXT_CHARS = 24  # of the text typed, echoed in the line that refuses it
MOMENT_HELP = ("a time such as 2026-11-24T03:12:40Z, 03:12 (today, local time), "
               "-15m (before now) or a Unix time")


class MomentError(ValueError):
    """Text that names no moment, or one still to come (the message says which)."""


def parse_moment(text: str, now: float, zone: tzinfo | None = None) -> float:
    """The epoch seconds ``text`` names, read at ``now`` in ``zone`` (None: the local
    time zone). Raises MomentError."""
    text = text.strip()
    quoted = repr(plain(text[:SHOWN_TEXT_CHARS]) + ("…" if len(text) > SHOWN_TEXT_CHARS else ""))
    try:
        moment = _read(text, now, zone)
    except (OverflowError, OSError, ValueError):  # a date or a number past what Python holds
        moment = -math.inf
    if moment is None:
        raise MomentError(f"{quoted} is not {MOMENT_HELP}")
    if not within_bounds(moment):
        raise MomentError(f"outside the times a backend holds (1970 to now): {quoted}")
    if moment > now + FUTURE_SLACK_SECONDS:
        raise MomentError(f"{quoted} is still to come ({shown(moment, zone)}): "
                          "only past moments can be shown")
    return moment


def within_bounds(moment: float) -> bool:
    """Whether ``moment`` (epoch seconds) is one a backend can hold (NaN is not)."""
    return EARLIEST <= moment <= LATEST


def _read(text: str, now: float, zone: tzinfo | None) -> float | None:
    if match := _AGO.fullmatch(text):
        return now - sum(float(n) * UNITS[unit] for n, unit in _AGO_PART.findall(match[1]))
    if _UNIX.fullmatch(text):
        return float(text)
    if match := _CLOCK.fullmatch(text):
        return _clock_today(match, now, zone)
    try:
        parsed = datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_zone_at(parsed, zone))
    return parsed.timestamp()


def _clock_today(match: re.Match, now: float, zone: tzinfo | None) -> float | None:
    hour, minute, second = int(match[1]), int(match[2]), int(match[3] or 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    today = datetime.fromtimestamp(now, zone).astimezone(zone)
    moment = today.replace(hour=hour, minute=minute, second=second, microsecond=0)
    if moment.timestamp() > now + FUTURE_SLACK_SECONDS:
        moment -= timedelta(days=1)
    return moment.timestamp()


def _zone_at(parsed: datetime, zone: tzinfo | None) -> tzinfo | None:
    """The zone to read a time without one in: ``zone``, else the local one then."""
    if zone is not None:
        return zone
    return parsed.astimezone().tzinfo


# The zone every time said to people is in: the user's local zone, or UTC where they asked
# for it (--utc, [display] utc). Set once at start, in the console's process and the
# engine's (``use_utc``); machine times (report --json, files) carry their offset anyway.
_DISPLAY: dict[str, tzinfo | None] = {"zone": None}


def use_utc(utc: bool) -> None:
    """Say every time in UTC (``utc``) or in the local zone."""
    _DISPLAY["zone"] = timezone.utc if utc else None


def display_zone() -> tzinfo | None:
    """The zone times are said in: UTC, or None for the local zone."""
    return _DISPLAY["zone"]


def zone_name(moment: float) -> str:
    """The name of the zone times are said in, as at ``moment`` ("UTC", "CET", "+0530")."""
    when = datetime.fromtimestamp(moment, display_zone()).astimezone(display_zone())
    return when.tzname() or when.strftime("%z")


def shown(moment: float, zone: tzinfo | None = None, *, now: float | None = None,
          dated: bool = False) -> str:
    """``moment`` as every screen and line for people says it: "14:02:11" in the display
    zone (``zone`` where given); with the date ("Nov 27 14:02:11") when ``now`` is of
    another day; ``dated``: with the year-date and the zone, for reports
    ("2026-11-27 14:02:11 CET")."""
    zone = zone or display_zone()
    when = datetime.fromtimestamp(moment, zone).astimezone(zone)
    if dated:
        return when.strftime("%Y-%m-%d %H:%M:%S ") + (when.tzname() or when.strftime("%z"))
    if now is not None and datetime.fromtimestamp(now, zone).astimezone(zone).date() \
            != when.date():
        return when.strftime("%b %d %H:%M:%S")
    return when.strftime("%H:%M:%S")


def shown_zoned(moment: float) -> str:
    """``moment`` as ``shown`` says it, with the zone's name: "14:02:11 CET"."""
    return f"{shown(moment)} {zone_name(moment)}"


def shown_full(moment: float, zone: tzinfo | None = None) -> str:
    """``moment`` with its date and zone offset: for reports and files."""
    zone = zone or display_zone()
    return datetime.fromtimestamp(moment, zone).astimezone(zone).isoformat(timespec="seconds")


def ago(seconds: float) -> str:
    """How long ago, the short way: "40 s", "14 min", "3 h 5 min", "2 d 4 h"."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def aligned(moment: float, step: float) -> float:
    """``moment`` brought down to a whole number of ``step``s since the epoch: replayed
    moments fall on the same grid, so a step back reuses what was fetched."""
    return (moment // step) * step


@dataclass(frozen=True)
class JobEnd:
    """The job's series ended at ``at`` (the newest sample of its step series), as a live
    poll at ``seen`` found: no rank answers now, and the backend holds what came before."""

    at: float
    seen: float

    def said(self, now: float | None = None) -> str:
        """"the job's series ended at 12:25:04, 5 min ago" (as of ``now``, else ``seen``)."""
        now = self.seen if now is None else now
        return f"the job's series ended at {shown(self.at)}, {ago(now - self.at)} ago"
