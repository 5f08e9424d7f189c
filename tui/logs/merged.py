"""A rank's log files read as one log, its lines in the order they were written.

A rank writes to several files (stderr and stdout under torchrun, each with its rotated
predecessors); shown one after the other, a dead rank's crash would sit above older step
lines. Lines are merged by the time stamped at their head (``line_time``); a line without
a stamp (an NCCL INFO line, a traceback) stays with the line before it in its own file,
and the lines of a file before its first stamp go just before that stamp. A file with no
stamp at all comes first, whole: what carries a time (warnings, errors, a crash) then ends
the log; of such files, the one written to last comes last (a worker's stdout of step lines
before its stderr's crash, neither stamped). Each file keeps its own order, whatever its
stamps say.

The files of several torchrun attempts (``ranktop.tui.logs.attempts``) are merged attempt by
attempt, the oldest first, a marker line before each later attempt's lines in a tail: a
restarted rank shows its old process's end, then the new one. Given a way to find the
rank's files again, a log being followed looks for new ones every ``REFIND_SECONDS`` and
reads them from their start, a marker first when they begin a new attempt: a restart
while the rank is watched shows too.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from ..core.outside_file import modified
from .attempts import attempt_groups, marker
from .line_time import line_time, local_clock
from .tail import FileLog, LogLine

_NEVER = float("-inf")
STAMP_LOOKBACK = 200
REFIND_SECONDS = 5.0
NEW_FILE_LINES = 500  # of a file found while followed, at most, from its end


def in_time_order(parts: Sequence[Sequence[LogLine]], now: float,
                  since: list[float | None] | None = None) -> list[LogLine]:
    """The lines of several files (one sequence each), merged by their stamps.

    ``now``: on ``line_time``'s scale, for the year of a stamp without one.
    ``since``: each file's last stamp so far (for lines read later), updated in place.
    """
    since = since if since is not None else [None] * len(parts)
    filled = [index for index, lines in enumerate(parts) if lines]
    if len(filled) == 1:  # nothing to merge: a flood of one file is not parsed line by line
        index = filled[0]
        last = _last_stamp(parts[index], now)
        since[index] = last if last is not None else since[index]
        return list(parts[index])
    keyed = []
    for index, lines in enumerate(parts):
        keys, since[index] = _keys(lines, now, since[index])
        keyed.append([(key, index, pos, line)
                      for pos, (key, line) in enumerate(zip(keys, lines, strict=True))])
    return [line for *_, line in heapq.merge(*keyed)]


def _last_stamp(lines: Sequence[LogLine], now: float) -> float | None:
    """The stamp of the last stamped line among the last ``STAMP_LOOKBACK`` (a flood of
    unstamped lines is not read whole for it)."""
    for line in lines[:-STAMP_LOOKBACK - 1:-1]:
        stamp = line_time(line.text, now)
        if stamp is not None:
            return stamp
    return None


def _keys(lines: Sequence[LogLine], now: float, last: float | None
          ) -> tuple[list[float], float | None]:
    """Each line's place in time, never before the line above it; the last stamp. A stamp
    without a year takes the one nearest the file's last stamp (else now)."""
    before, stamps = last, []
    for line in lines:
        stamp = line_time(line.text, last if last is not None else now)
        last = stamp if stamp is not None else last
        stamps.append(stamp)
    first = next((s for s in stamps if s is not None), None)
    current = before if before is not None else (_NEVER if first is None else first)
    keys = []
    for stamp in stamps:
        current = current if stamp is None else max(current, stamp)
        keys.append(current)
    return keys, last


class MergedLog:
    """Several ``FileLog``s as one log source; each line says which file it came from."""

    def __init__(self, logs: Sequence[FileLog],
                 refind: Callable[[], Sequence[Path]] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logs = list(logs)
        self.name = ", ".join(log.name for log in self.logs)
        self._since: list[float | None] = [None] * len(self.logs)
        self._attempts = attempt_groups([log.path for log in self.logs])
        self._refind = refind  # the rank's files as found now
        self._clock = clock
        self._found_at = clock()

    def tail(self, lines: int) -> list[LogLine]:
        """Each file's last ``lines`` lines (and its predecessor's), merged."""
        parts = [log.tail(lines) for log in self.logs]
        self._since = [None] * len(self.logs)
        later = {attempt for position, (attempt, _) in enumerate(self._attempts) if position}
        return self._merged(parts, later)

    def follow(self) -> list[LogLine]:
        """What every file gained since the last call, merged; and the files found since,
        from their start."""
        parts = [log.follow() for log in self.logs]
        new = self._new_files()
        if not new:
            return self._merged(parts, ())
        known = {attempt for attempt, _ in self._attempts}
        for path in new:
            self.logs.append(FileLog(path))
            self._since.append(None)
            parts.append(self.logs[-1].tail(NEW_FILE_LINES))
        self._attempts = attempt_groups([log.path for log in self.logs])
        first = self._attempts[0][0]
        return self._merged(parts, {attempt for attempt, _ in self._attempts
                                    if attempt not in known and attempt != first})

    def _new_files(self) -> list[Path]:
        """The rank's files not yet read, when it is time to look."""
        if self._refind is None or self._clock() - self._found_at < REFIND_SECONDS:
            return []
        self._found_at = self._clock()
        try:
            found = self._refind()
        except (OSError, ValueError):
            return []
        reading = {log.path for log in self.logs}
        return [path for path in found if path not in reading]

    def _merged(self, parts: list[list[LogLine]], marked: Collection[int | None]
                ) -> list[LogLine]:
        """The parts merged attempt by attempt, a marker before the lines of each attempt
        ``marked`` names."""
        now = local_clock(time.time())
        merged: list[LogLine] = []
        for attempt, files in self._attempts:
            indices = sorted(files, key=lambda index: modified(self.logs[index].path))
            since = [self._since[index] for index in indices]
            lines = in_time_order([parts[index] for index in indices], now, since)
            for index, last in zip(indices, since, strict=True):
                self._since[index] = last
            if attempt is not None and attempt in marked:
                merged.append(LogLine(marker(attempt), "plain", origin="ranktop"))
            merged.extend(lines)
        return merged

    def status(self) -> str:
        """What happened to any of the files, each named when there are several."""
        said = [(log, log.status()) for log in self.logs]
        if len(self.logs) == 1:
            return said[0][1]
        named = 3 if len(self._attempts) > 1 else 1  # attempt_1/3/stderr.log
        return "; ".join(f"{'/'.join(Path(log.name).parts[-named:])}: {status}"
                         for log, status in said if status)

    def close(self) -> None:
        for log in self.logs:
            log.close()

