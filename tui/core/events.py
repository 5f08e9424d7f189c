"""The anomaly event log: every start and resolve of an anomaly, kept as JSONL on local disk.

Each rank's alert history is read back from this file, so restarting ranktop keeps it.
Several ranktop instances may share the file: every append is a single write to an O_APPEND
descriptor, made under a lock file that also guards rotation. Nothing here raises on a bad disk
or a bad line; what went wrong is recorded in ``EventLog.warnings`` for the console to show.

The file is outside data: a record is at most ``MAX_RECORD_BYTES`` (its text fields are cut
short to fit), a longer line is skipped unread, only the last ``read_bytes`` of a file are read,
and anything but a regular file (a FIFO, a device, a folder) is refused without blocking.
"""

from __future__ import annotations

import errno
import fcntl
import json
import math
import os
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MAX_WARNINGS = 100
# The poll's thread appends: it waits this long at most for another process's lock, then
# keeps the lines for the next append (up to HELD_BYTES) rather than stall the polling.
LOCK_WAIT_SECONDS = 1.0
HELD_BYTES = 1_000_000
# Text fields are cut to these lengths; at six bytes a character (\u escapes) a record then
# stays under MAX_RECORD_BYTES, and a longer line in the file is no record of ours.
SUMMARY_CHARS = 1000
FIELD_CHARS = 200
MAX_RECORD_BYTES = 16 * 1024

_TEXT = (str,)
_TYPES: dict[str, tuple[type, ...]] = dict(
    time=(int, float), state=_TEXT, kind=_TEXT, severity=_TEXT, rank=(int, type(None)),
    host=_TEXT, gpu=(int, type(None)), job=_TEXT, summary=_TEXT, source=_TEXT,
)  # fmt: skip


@dataclass(frozen=True)
class Event:
    """One start or resolve of an anomaly on a rank, or across the job when ``rank`` is None."""

    time: float  # epoch seconds
    state: str  # "start", "resolve", or "correct" / "retract" for a verdict that changed
    kind: str  # "thermal", "straggler", "missing", "xid", "loss", ...
    severity: str  # "critical", "major" or "warning"
    rank: int | None  # None for a job-wide anomaly
    host: str  # "" for job-wide
    gpu: int | None
    job: str
    summary: str  # one line of evidence
    source: str = "ranktop"


def default_log_path() -> Path:
    """``$XDG_STATE_HOME/ranktop/events.jsonl``, the state home defaulting to ~/.local/state."""
    base = os.environ.get("XDG_STATE_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "ranktop" / "events.jsonl"


def encode_event(event: Event) -> bytes:
    """The event as one JSON line, its text cut to fit a record; ValueError if its time is
    not finite."""
    record = {name: _cut(value, SUMMARY_CHARS if name == "summary" else FIELD_CHARS)
              if isinstance(value, str) else value for name, value in asdict(event).items()}
    text = json.dumps(record, ensure_ascii=False, sort_keys=True, allow_nan=False)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (surrogateescape input) has no UTF-8 form; \u escapes keep it exact.
        return (json.dumps(record, sort_keys=True, allow_nan=False) + "\n").encode("ascii")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def decode_event(line: bytes) -> Event:
    """The event on one line; ValueError saying what is wrong with the line."""
    if len(line) > MAX_RECORD_BYTES:
        raise ValueError(f"longer than {MAX_RECORD_BYTES:,} bytes")
    try:
        record = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("not valid UTF-8") from None
    except (ValueError, RecursionError):
        raise ValueError("not valid JSON") from None
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    names = [name for name in _TYPES if name in record or name != "source"]  # source: optional
    values = {name: _field(record, name) for name in names}
    try:
        values["time"] = float(values["time"])
    except OverflowError:
        raise ValueError("field 'time' is out of range") from None
    if not math.isfinite(values["time"]):
        raise ValueError("field 'time' is not finite")
    return Event(**values)


def _field(record: dict[str, Any], name: str) -> Any:
    if name not in record:
        raise ValueError(f"missing field {name!r}")
    value = record[name]
    if isinstance(value, bool) or not isinstance(value, _TYPES[name]):
        raise ValueError(f"field {name!r} has the wrong type")
    return value


class EventLog:
    """An append-only JSONL file of events, rotated to ``keep`` old files past ``max_bytes``;
    of each file only the last ``read_bytes`` are read (default: twice ``max_bytes``)."""

    def __init__(self, path: Path, max_bytes: int = 5_000_000, keep: int = 3,
                 read_bytes: int | None = None) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.keep = keep
        self.read_bytes = max(read_bytes or 2 * max_bytes, MAX_RECORD_BYTES + 1)
        self.warnings: list[str] = []  # newest last, at most MAX_WARNINGS, no repeats
        self._held = b""  # whole lines not yet written: the lock was held by another process
        self._appending = threading.Lock()  # threads of this process take turns

    def append(self, events: Sequence[Event]) -> None:
        """Add the events as whole lines in one write; failures become warnings."""
        with self._appending:
            self._append(b"".join(self._encode_all(events)))

    def _append(self, chunk: bytes) -> None:
        chunk, self._held = self._held + chunk, b""
        if not chunk:
            return
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with self._locked():
                size, last = self._tail()
                if size > self.max_bytes:
                    self._rotate()
                elif last not in (b"", b"\n"):
                    chunk = b"\n" + chunk  # don't glue our first line onto a crash's half-line
                self._write(chunk)
        except BlockingIOError:
            self._hold(chunk)
        except OSError as error:
            self._warn(f"{self.path.name}: could not append events: {error.strerror or error}")

    def _hold(self, chunk: bytes) -> None:
        kept = chunk if len(chunk) <= HELD_BYTES else b""
        self._held = kept
        lost = "" if kept else f"; {len(chunk):,} bytes of events dropped"
        self._warn(f"{self.path.name}: locked by another process for {LOCK_WAIT_SECONDS:.0f} s, "
                   f"events kept for the next write{lost}")

    def read(
        self, since: float | None = None, rank: int | None = None, job: str | None = None
    ) -> list[Event]:
        """The history in time order, rotated files included; bad lines become warnings."""
        events = [event for path in self._files_oldest_first() for event in self._read_file(path)]
        chosen = [
            event
            for event in events
            if (since is None or event.time >= since)
            and (rank is None or event.rank == rank)
            and (job is None or event.job == job)
        ]
        return sorted(chosen, key=lambda event: event.time)

    def _encode_all(self, events: Sequence[Event]) -> list[bytes]:
        lines = []
        for event in events:
            try:
                lines.append(encode_event(event))
            except ValueError as error:
                self._warn(f"{self.path.name}: event not written: {error}")
        return lines

    def _write(self, chunk: bytes) -> None:
        fd = _open_regular(self.path, os.O_APPEND | os.O_CREAT | os.O_WRONLY)
        try:
            written = os.write(fd, chunk)
        finally:
            os.close(fd)
        if written < len(chunk):
            self._warn(f"{self.path.name}: wrote only {written} of {len(chunk)} bytes")

    def _tail(self) -> tuple[int, bytes]:
        """The file's size and last byte; (0, b"") when it is missing."""
        try:
            fd = _open_regular(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return 0, b""
        with open(fd, "rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(size - 1, 0))
            return size, file.read(1)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # Held across the tail check, rotation and write: two instances rotating at once
        # would lose a file, and the check could see another writer's chunk half-done.
        fd = _open_regular(self._numbered_path("lock"), os.O_CREAT | os.O_WRONLY)
        try:
            _lock_within(fd, LOCK_WAIT_SECONDS)  # released by close
            yield
        finally:
            os.close(fd)

    def _rotate(self) -> None:
        for index in range(self.keep, 0, -1):
            older = self._numbered_path(index - 1)
            if older.exists():
                os.replace(older, self._numbered_path(index))
        if self.keep <= 0:
            self.path.unlink(missing_ok=True)

    def _numbered_path(self, suffix: int | str) -> Path:
        return self.path if suffix == 0 else self.path.with_name(f"{self.path.name}.{suffix}")

    def _files_oldest_first(self) -> list[Path]:
        return [self._numbered_path(index) for index in range(max(self.keep, 0), -1, -1)]

    def _read_file(self, path: Path) -> list[Event]:
        try:
            data, skipped = self._read_tail(path)
        except FileNotFoundError:
            return []
        except OSError as error:
            self._warn(f"{path.name}: could not read: {error.strerror or error}")
            return []
        lines = data.split(b"\n")
        if skipped:
            self._warn(f"{path.name}: larger than {self.read_bytes:,} bytes; "
                       f"only its last {len(data):,} read")
            lines[0] = b""  # the tail starts inside a line
        events = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                events.append(decode_event(line))
            except ValueError as error:
                # The piece after the final newline was never finished: a crash mid-write.
                last = number == len(lines)
                reason = f"truncated last line ({error})" if last else str(error)
                self._warn(f"{path.name} line {number}: {reason}")
        return events

    def _read_tail(self, path: Path) -> tuple[bytes, int]:
        """The file's last ``read_bytes`` and how many bytes came before them."""
        with open(_open_regular(path, os.O_RDONLY), "rb") as file:
            size = file.seek(0, os.SEEK_END)
            start = max(size - self.read_bytes, 0)
            file.seek(start)
            return file.read(self.read_bytes), start

    def _warn(self, message: str) -> None:
        if message in self.warnings:
            self.warnings.remove(message)
        self.warnings.append(message)
        del self.warnings[:-MAX_WARNINGS]


def _lock_within(fd: int, seconds: float) -> None:
    """Take the exclusive lock, or raise BlockingIOError after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def _open_regular(path: Path, flags: int) -> int:
    """A descriptor of ``path`` if it is a regular file (made 0600 with O_CREAT); a FIFO, a
    device or a folder is an OSError, found without blocking."""
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_NOCTTY, 0o600)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file")
    os.set_blocking(fd, True)
    return fd
