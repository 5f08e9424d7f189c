"""A rank's logs read by the engine in its own process, a page at a time.

The UI's process does no I/O on the job's logs when its engine runs apart: the engine keeps
each log it opened for a rank screen under an id (``LogShelf``), and the screen reads it
through a ``RemoteLog``, a ``LogSource`` whose calls are requests. What a read gives crosses
in pages of at most ``PAGE_BYTES`` of text: a flood the log gave in one read (up to
``FileLog``'s follow limits) comes in several messages, each small, which ``RemoteLog`` puts
back together, so the screen sees what a local read would have given. A log's status
crosses with each page. Closing a ``RemoteLog`` releases the engine's files."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

from ..core.model import RankMap
from ..logs.sizes import file_sizes
from ..logs.tail import LogLine, LogSource
from .protocol import (
    LogClose,
    LogFollow,
    LogMore,
    LogSizes,
    LogTail,
    OpenLogs,
    Page,
    Request,
)

PAGE_BYTES = 256 * 1024  # of a page's text, at most (a page holds one line at least)
LINE_BYTES = 32  # what a line costs in a page besides its text: its kind, its file, ...

LogOpener = Callable[[RankMap, int], tuple[list[LogSource], str]]


class _Shelved:
    """An open log, and what its last read gave that is still to be sent."""

    def __init__(self, log: LogSource) -> None:
        self.log = log
        self.lock = threading.Lock()  # a log is read by one caller at a time
        self.read: list[LogLine] = []
        self.sent = 0
        self.status = ""


class LogShelf:
    """The engine's side: the logs open for rank screens, each under an id."""

    def __init__(self, open_logs: LogOpener, page_bytes: int = PAGE_BYTES) -> None:
        self._open_logs = open_logs
        self.page_bytes = page_bytes
        self._shelved: dict[int, _Shelved] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def open(self, rank_map: RankMap, rank: int) -> tuple[list[tuple[int, str]], str]:
        """The rank's logs as (id, name), and a note on what was found."""
        logs, note = self._open_logs(rank_map, rank)
        opened = []
        with self._lock:
            for log in logs:
                log_id = next(self._ids)
                self._shelved[log_id] = _Shelved(log)
                opened.append((log_id, log.name))
        return opened, note

    def tail(self, log_id: int, lines: int) -> Page:
        return self._read(log_id, lambda log: log.tail(lines))

    def follow(self, log_id: int) -> Page:
        return self._read(log_id, lambda log: log.follow())

    def more(self, log_id: int) -> Page:
        """The next page of the last read."""
        shelved = self._find(log_id)
        with shelved.lock:
            return self._page(shelved)

    def sizes(self, log_id: int) -> dict[str, int]:
        """The size of each file the log reads (where its excerpt ends in it)."""
        shelved = self._find(log_id)
        with shelved.lock:
            return file_sizes(shelved.log)

    def close(self, log_id: int) -> None:
        with self._lock:
            shelved = self._shelved.pop(log_id, None)
        if shelved is not None:
            with shelved.lock:
                shelved.log.close()

    def close_all(self) -> None:
        for log_id in list(self._shelved):
            self.close(log_id)

    def __len__(self) -> int:
        return len(self._shelved)

    def _find(self, log_id: int) -> _Shelved:
        with self._lock:
            shelved = self._shelved.get(log_id)
        if shelved is None:
            raise ValueError(f"no log open under id {log_id} (closed, or the engine restarted)")
        return shelved

    def _read(self, log_id: int, read: Callable[[LogSource], list[LogLine]]) -> Page:
        shelved = self._find(log_id)
        with shelved.lock:
            shelved.read, shelved.sent = read(shelved.log), 0
            shelved.status = shelved.log.status()
            return self._page(shelved)

    def _page(self, shelved: _Shelved) -> Page:
        start = end = shelved.sent
        size = 0
        while end < len(shelved.read):
            size += line_bytes(shelved.read[end])
            if size > self.page_bytes and end > start:
                break
            end += 1
        lines = tuple((ln.text, ln.kind, ln.partial, ln.origin)
                      for ln in shelved.read[start:end])
        shelved.sent = end
        more = end < len(shelved.read)
        if not more:
            shelved.read, shelved.sent = [], 0
        return Page(lines, shelved.status, more)


def line_bytes(line: LogLine) -> int:
    """What ``line`` costs in a page: its text's UTF-8 bytes and a little more."""
    return len(line.text.encode("utf-8", "surrogatepass")) + LINE_BYTES


Answer = TypeVar("Answer")


class Asker(Protocol):
    """The UI's end of the engine: a request's future, or its answer waited for."""

    def ask(self, request: Request[Answer]) -> Future[Answer]: ...

    def answer(self, request: Request[Answer]) -> Answer: ...


class RemoteLog:
    """The UI's side: a ``LogSource`` whose reads are requests to the engine. Each call may
    raise ``EngineStopped`` or ``EngineSilent``, as any blocking request may."""

    def __init__(self, engine: Asker, log_id: int, name: str) -> None:
        self._engine = engine
        self.log_id = log_id
        self.name = name
        self._status = ""
        self._closed = False

    def tail(self, lines: int) -> list[LogLine]:
        return self._pages(self._engine.answer(LogTail(self.log_id, lines)))

    def follow(self) -> list[LogLine]:
        return self._pages(self._engine.answer(LogFollow(self.log_id)))

    def status(self) -> str:
        """The log's status as the last read left it."""
        return self._status

    def sizes(self) -> dict[str, int]:
        """The size of each file the engine reads for this log."""
        return self._engine.answer(LogSizes(self.log_id))

    def close(self) -> None:
        """Release the engine's files (not waiting for it to say so)."""
        if not self._closed:
            self._closed = True
            self._engine.ask(LogClose(self.log_id))

    def _pages(self, page: Page) -> list[LogLine]:
        """The lines of the page answered and of the pages after it."""
        lines: list[LogLine] = []
        while True:
            lines += (LogLine(*line) for line in page.lines)
            self._status = page.status
            if not page.more:
                return lines
            page = self._engine.answer(LogMore(self.log_id))


def open_remote(engine: Asker, rank_map: RankMap, rank: int) -> tuple[list[LogSource], str]:
    """The rank's logs, opened by the engine, and its note on what was found."""
    opened, note = engine.answer(OpenLogs(rank_map, rank))
    return [RemoteLog(engine, log_id, name) for log_id, name in opened], note


# The log requests of the engine's dispatch table, each answered by the shelf.
LOG_REQUESTS: dict[type[Request], Callable[[LogShelf, Any], object]] = {
    OpenLogs: lambda shelf, r: shelf.open(r.rank_map, r.rank),
    LogTail: lambda shelf, r: shelf.tail(r.log_id, r.lines),
    LogFollow: lambda shelf, r: shelf.follow(r.log_id),
    LogMore: lambda shelf, r: shelf.more(r.log_id),
    LogSizes: lambda shelf, r: shelf.sizes(r.log_id),
    LogClose: lambda shelf, r: shelf.close(r.log_id),
}
