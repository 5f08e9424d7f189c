"""A log file's rotated predecessors: where its older lines went when it was rotated.

Log rotation moves a file's lines aside under a related name, in one of two ways: the file
is renamed and a new one created, or (logrotate's ``copytruncate``) it is copied aside and
truncated to zero in place. Either way the current file holds only the lines written since,
so a rank's recent past, a watchdog timeout included, may sit in the predecessor.

The names recognised, each optionally compressed with a further ``.gz``:

- numbered: ``name.1``, ``name.2``, ... (logrotate, Python's RotatingFileHandler) and
  ``name-1``;
- dated: ``name-20261122`` (logrotate's ``dateext``; also ``-2026112213`` by the hour and
  ``-20261122-1732233600`` with a ``%s`` stamp) and ``name.2026-11-22`` (Python's
  TimedRotatingFileHandler; also ``_13``, ``_13-05``, ``_13-05-07`` for shorter periods).

Predecessors come newest first by modification time (rotation keeps it, or sets it to the
moment of rotation), then by the recency their names tell.
"""

from __future__ import annotations

import os
import re
from collections.abc import Set
from pathlib import Path

_NUMBERED = r"[.-](?P<number>\d{1,4})"
_DATED = (r"-(?P<compact>\d{8}(?:\d{2})?(?:-\d+)?)"
          r"|\.(?P<iso>\d{4}-\d\d-\d\d(?:_\d\d(?:-\d\d){0,2})?)")
_SUFFIX = re.compile(rf"(?:{_DATED}|{_NUMBERED})(?P<gz>\.gz)?")


def rotated_suffix(current: str, candidate: str) -> re.Match[str] | None:
    """How ``candidate`` names a rotated copy of the file named ``current``, or None."""
    if not candidate.startswith(current) or candidate == current:
        return None
    return _SUFFIX.fullmatch(candidate, len(current))


def predecessors(path: Path, exclude: Set[str] = frozenset()) -> list[Path]:
    """The rotated predecessors of ``path`` in its directory, newest first.

    ``exclude``: the absolute paths (``os.path.abspath``) of files that are current logs
    themselves (``rank-1`` is a rank's file, not ``rank``'s predecessor, when both are
    listed). Only regular files count; a directory that cannot be read has none.
    """
    directory = path.parent
    found: list[tuple[float, tuple, Path]] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    for entry in entries:
        suffix = rotated_suffix(path.name, entry.name)
        if suffix is None or (exclude and os.path.abspath(entry.path) in exclude):
            continue
        try:
            if not entry.is_file():
                continue
            mtime = entry.stat().st_mtime
        except OSError:
            continue
        found.append((-mtime, _recency(suffix), directory / entry.name))
    return [candidate for _, _, candidate in sorted(found)]


def _recency(suffix: re.Match[str]) -> tuple:
    """A sort key for equal modification times: lower is newer."""
    compressed = suffix.group("gz") is not None  # logrotate compresses the older ones
    if suffix.group("number") is not None:
        return (compressed, 0, int(suffix.group("number")), "")
    stamp = suffix.group("compact") or suffix.group("iso")
    # Newer dates sort first: invert each digit.
    return (compressed, 1, 0, stamp.translate(str.maketrans("0123456789", "9876543210")))
