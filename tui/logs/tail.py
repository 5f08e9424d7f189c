"""One rank's log, read safely: a file's tail, what is appended to it, and each line's kind.

This is the data layer of ranktop's log view: no Textual here. The UI calls it from a
thread worker, one call at a time. Nothing raises for I/O trouble: ``status()`` says what
happened ("missing", "deleted: showing what was read", "error: ..."; and for
``NOTICE_SECONDS`` after the event, "truncated: reading from the start", "rotated:
following the new file" or "recreated: reading the new file"). Memory stays bounded:
``tail`` reads backwards from the end (a few blocks for ordinary lines), ``follow`` reads
at most ``max_follow_bytes`` and returns at most ``max_follow_lines`` lines per call (with
a "[ranktop: skipped N bytes]" or "[ranktop: skipped N lines]" line when it had to skip),
and keeps at most one line's worth of bytes for a line still being written.

Making a line safe and naming its kind is ``ranktop.tui.core.text`` (``sanitise`` and ``classify``
are re-exported here). Finding the files of a rank is in ``ranktop.tui.logs.discovery``;
``find_logs`` and ``PRESETS`` are re-exported here.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..core.outside_file import open_regular
from ..core.text import byte_limit, classify, clean, count_chars, plain, sanitise
from .discovery import PRESETS, find_logs
from .gztail import gz_tail
from .rotation import predecessors

__all__ = ["PRESETS", "FileLog", "LogLine", "LogSource", "classify", "find_logs", "sanitise"]

NOTICE_SECONDS = 10.0  # how long status() keeps saying "truncated", "rotated" or "recreated"
_BLOCK = 64 * 1024
GZ_TAIL_BYTES = 4_000_000  # of a compressed predecessor's text, at most, for a tail

@dataclass(frozen=True, slots=True)
class LogLine:
    """One displayable line and its kind (see ``classify``)."""

    text: str
    kind: str
    partial: bool = False  # tail()'s last line, still without its newline
    origin: str = ""  # the name of the file it came from


class LogSource(Protocol):
    """A log ranktop can show: a local file now, perhaps a remote one later."""

    name: str

    def tail(self, lines: int) -> list[LogLine]: ...

    def follow(self) -> list[LogLine]: ...

    def status(self) -> str: ...

    def close(self) -> None: ...


class _Pending:
    """The bytes of a line whose newline has not arrived yet, at most ``limit`` of them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0  # characters beyond the limit, for the cut marker
        self.ends_in_cr = False

    def add(self, data: bytes) -> None:
        if not data:
            return
        if self.ends_in_cr and data.strip(b"\r"):
            self.clear()
        self.ends_in_cr = data.endswith(b"\r")
        restart = data.rstrip(b"\r").rfind(b"\r")
        if restart >= 0:
            self.clear()
            data = data[restart + 1:]
        room = max(self.limit - len(self.data), 0)
        if len(data) > room:
            self.dropped += count_chars(data[room:])
            data = data[:room]
        self.data += data

    def take(self) -> tuple[bytes, int]:
        taken = bytes(self.data), self.dropped
        self.clear()
        return taken

    def clear(self) -> None:
        self.data.clear()
        self.dropped = 0
        self.ends_in_cr = False

    def __bool__(self) -> bool:
        return bool(self.data) or self.dropped > 0


class FileLog:
    """A local log file: its tail, then what is appended, across truncation and rotation.

    Not thread-safe: one caller at a time. ``close()`` releases the file.
    """

    def __init__(self, path: Path, max_line_chars: int = 4000,
                 max_follow_bytes: int = 4_000_000, max_follow_lines: int = 50_000) -> None:
        self.path = Path(path)
        self.name = str(path)
        self.origin = plain(self.path.name)  # what each line says of its file
        self.max_line_chars = max_line_chars
        self.max_follow_bytes = max_follow_bytes
        self.max_follow_lines = max_follow_lines
        self.bytes_read = 0
        self._fd: int | None = None
        self._offset = 0
        self._pending = _Pending(byte_limit(max_line_chars))
        self._started = False
        self._state = ""
        self._notice = ""
        self._notice_until = 0.0

    def tail(self, lines: int) -> list[LogLine]:
        """The last ``lines`` lines (a final line without its newline too, as partial)."""
        self.close()
        self._pending.clear()
        self._started, self._state, self._notice, self._offset = True, "", "", 0
        try:
            if not self._open():
                return []
            size = os.fstat(self._fd).st_size
            data, at_start = self._read_back(size, lines)
        except OSError as error:
            self._fail(error)
            return []
        self._offset = size
        found = self._tail_lines(data, lines, at_start)
        if len(found) < lines and at_start:
            found = self._before_rotation(lines - len(found)) + found
        return found

    def _before_rotation(self, lines: int) -> list[LogLine]:
        """The last lines of the newest rotated predecessor, under a line that names it: a
        file just rotated holds little or nothing, and what led up to now is there (a dead
        rank's crash, after logrotate)."""
        older = predecessors(self.path)
        if not older or lines < 2:
            return []
        path, lines = older[0], lines - 1  # a line for the mark
        earlier = FileLog(path, self.max_line_chars)
        if path.suffix == ".gz":
            found = earlier._tail_lines(gz_tail(path, lines, GZ_TAIL_BYTES), lines, True)
        else:
            found = earlier.tail(lines)
            earlier.close()
        if not found:
            return []
        mark = LogLine(f"[ranktop: above, the last lines of {plain(path.name)}, before"
                       f" {plain(self.path.name)} was rotated]", "plain")
        return [*found, mark]

    def follow(self) -> list[LogLine]:
        """The lines completed since the last tail() or follow()."""
        try:
            return self._follow()
        except OSError as error:
            self._fail(error)
            return []

    def status(self) -> str:
        """Empty when all is well, else what happened to the file."""
        if self._state:
            return self._state
        return self._notice if time.monotonic() < self._notice_until else ""

    def close(self) -> None:
        """Release the file; the next tail() or follow() opens it again."""
        fd = getattr(self, "_fd", None)
        if fd is not None:
            self._fd = None
            os.close(fd)

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            self.close()

    def _open(self) -> bool:
        try:
            self._fd = open_regular(self.path)  # a FIFO or a device is no log: refused
        except FileNotFoundError:
            if not self._state.startswith("deleted"):
                self._state = "missing"
            return False
        except OSError as error:
            self._fail(error)
            return False
        self._state = ""
        return True

    def _fail(self, error: OSError) -> None:
        self._state = f"error: {error.strerror or error}"

    def _note(self, notice: str) -> None:
        self._notice, self._notice_until = notice, time.monotonic() + NOTICE_SECONDS

    def _pread(self, size: int, offset: int) -> bytes:
        chunks = []
        while size > 0:
            chunk = os.pread(self._fd, size, offset)
            if not chunk:
                break
            chunks.append(chunk)
            size -= len(chunk)
            offset += len(chunk)
        data = b"".join(chunks)
        self.bytes_read += len(data)
        return data

    def _read_back(self, size: int, lines: int) -> tuple[bytes, bool]:
        """Blocks from the end until ``lines`` + 1 newlines; bounded for giant lines."""
        cap = max(lines, 1) * (self._pending.limit + 1)
        pos, newlines, chunks = size, 0, []
        while pos > 0 and newlines <= lines and size - pos < cap:
            step = min(_BLOCK, pos)
            pos -= step
            chunk = self._pread(step, pos)
            chunks.append(chunk)
            newlines += chunk.count(b"\n")
        return b"".join(reversed(chunks)), pos == 0

    def _tail_lines(self, data: bytes, lines: int, at_start: bool) -> list[LogLine]:
        parts = data.split(b"\n")
        self._pending.add(parts.pop())
        partial = [self._line(*self._pending_copy(), partial=True)] if self._pending else []
        if lines <= 0:
            return []
        fragment = parts.pop(0) if parts and not at_start else None
        keep = max(lines - len(partial), 0)
        body = [self._line(part) for part in parts[max(len(parts) - keep, 0):]] if keep else []
        if fragment is not None and len(body) < keep:
            body.insert(0, self._fragment(fragment))
        return (body + partial)[-lines:]

    def _pending_copy(self) -> tuple[bytes, int]:
        return bytes(self._pending.data), self._pending.dropped

    def _fragment(self, raw: bytes) -> LogLine:
        """The end of a line whose start lies before the bytes tail() read."""
        line = self._line(raw)
        if b"\r" in raw.rstrip(b"\r"):
            return line  # a carriage return started it over: what follows is whole
        return LogLine("…" + line.text, line.kind, origin=self.origin)

    def _line(self, raw: bytes, dropped: int = 0, partial: bool = False) -> LogLine:
        text = clean(raw, self.max_line_chars, dropped)
        return LogLine(text, classify(text), partial, self.origin)

    def _follow(self) -> list[LogLine]:
        if not self._started:
            self._started = True
            if self._open():
                self._offset = os.fstat(self._fd).st_size
            return []
        if self._fd is None:
            return self._appear()
        try:
            named = os.stat(self.path)
        except FileNotFoundError:
            named = None
        own = os.fstat(self._fd)
        if named is not None and (named.st_ino, named.st_dev) == (own.st_ino, own.st_dev):
            return self._check_truncation(own.st_size) + self._read_new()
        lines = self._finish()
        if named is None:
            self._state = "deleted: showing what was read"
            return lines
        self._note("recreated: reading the new file" if own.st_nlink == 0
                   else "rotated: following the new file")
        return lines + (self._read_new() if self._open() else [])

    def _appear(self) -> list[LogLine]:
        """The file was missing, deleted or unreadable: read it from its start once it is."""
        was_deleted = self._state.startswith("deleted")
        if not self._open():
            return []
        self._offset = 0
        if was_deleted:
            self._note("recreated: reading the new file")
        return self._read_new()

    def _check_truncation(self, size: int) -> list[LogLine]:
        if size >= self._offset:
            return []
        lines = self._flush()
        self._offset = 0
        self._note("truncated: reading from the start")
        return lines

    def _finish(self) -> list[LogLine]:
        """The rest of the file being left, its unfinished last line included."""
        lines = self._read_new() + self._flush()
        self.close()
        self._offset = 0
        return lines

    def _flush(self) -> list[LogLine]:
        return [self._line(*self._pending.take())] if self._pending else []

    def _read_new(self) -> list[LogLine]:
        available = os.fstat(self._fd).st_size - self._offset
        if available <= 0:
            return []
        skipped = max(available - self.max_follow_bytes, 0)
        data = self._pread(available - skipped, self._offset + skipped)
        self._offset += skipped + len(data)
        self._state = ""
        lines = []
        if skipped:
            self._pending.clear()
            start = data.find(b"\n") + 1  # the first line began in the skipped bytes
            data = data[start:]
            lines.append(LogLine(f"[ranktop: skipped {skipped + start} bytes]", "plain"))
        data, dropped = self._keep_last_lines(data)
        if dropped:
            lines.append(LogLine(f"[ranktop: skipped {dropped} lines]", "plain"))
        return lines + self._split(data)

    def _keep_last_lines(self, data: bytes) -> tuple[bytes, int]:
        """At most ``max_follow_lines`` complete lines: a flood of tiny lines stays small."""
        count = data.count(b"\n")
        if count <= self.max_follow_lines:
            return data, 0
        pos = len(data)
        for _ in range(self.max_follow_lines + 1):
            pos = data.rfind(b"\n", 0, pos)
        self._pending.clear()
        return data[pos + 1:], count - self.max_follow_lines

    def _split(self, data: bytes) -> list[LogLine]:
        *complete, last = data.split(b"\n")
        lines = []
        if complete:
            self._pending.add(complete[0])
            lines.append(self._line(*self._pending.take()))
            lines += [self._line(part) for part in complete[1:]]
        self._pending.add(last)
        return lines
