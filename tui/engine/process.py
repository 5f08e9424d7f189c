"""The engine in a process of its own, the console's default for Prometheus sources: the
UI's process does no HTTP, no decoding and no analysis, and shares no GIL with them.

``ProcessEngine`` answers ``EngineClient`` requests by message to ``serve`` in a child
process (spawned: no thread of the UI's is copied into it). Requests run concurrently; each
answer comes back to the request that asked. Snapshots are renumbered here, so versions
keep growing across a restart of the engine, and the rank map, sent only when it changed,
is put back into each snapshot.

If the engine process dies, every request in flight fails with ``EngineStopped``; the app
says so and calls ``restart``, keeping what is on screen until the new engine's first poll.
So does an engine that stops answering (stopped by a signal, or stuck holding the
interpreter): while a request waits, the engine is asked every ``ALIVE_SECONDS`` whether it
answers at all, and one that does not answer that within ``ALIVE_SECONDS`` is taken for
stopped. A poll may take long (a catch-up on the job's past); an engine that answers
nothing, not. Every request goes through ``ask`` (or ``answer``, blocking) and raises
``EngineSilent`` past its deadline (``protocol``), and no message over
``link.MESSAGE_BYTES`` crosses either way. A rank's logs are read by the engine too, a page
at a time (``remote_log``): this process reads no file of the job's."""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import time
from collections.abc import Callable, Sequence
from functools import partial
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TypeVar

from ..core.model import Rank, RankMap
from ..logs.tail import LogSource
from ..settings.config import Settings
from .client import EngineRefused, EngineSilent, EngineStopped
from .link import Link
from .maps import MapGeometry
from .protocol import (
    ALIVE_SECONDS,
    AlertRows,
    Alive,
    At,
    Backfill,
    FindPipes,
    GpuModel,
    PipesFound,
    Poll,
    Queries,
    RankHistoryOf,
    Request,
    RequestDumps,
    Settle,
)
from .remote_log import open_remote
from .replay import NothingThen
from .serve import serve
from .snapshot import RankHistory, RankMapVersions, Snapshot
from .wire import Received

Answer = TypeVar("Answer")

START_SECONDS = 60.0  # to import, build the source and learn the ranks (a rank-map file)
CLOSE_SECONDS = 2.0  # for the engine to end once the pipe is hung up; then it is killed


class EngineFailed(Exception):
    """The engine could not start: its source could not be made (the reason)."""


class ProcessEngine:
    """An ``EngineClient`` whose engine runs in a child process."""

    def __init__(self, settings: Settings, make_source: Callable, event_log: Path | None = None,
                 answer_seconds: float = math.inf,
                 alive_seconds: float = ALIVE_SECONDS) -> None:
        self._args = (settings, make_source, event_log)
        self.answer_seconds = answer_seconds
        self.alive_seconds = alive_seconds
        self.restarts = 0
        self.latest = self._start()
        self.rank_maps = RankMapVersions(self.latest.analysis.rank_map)

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def _start(self) -> Snapshot:
        """Start an engine process; its first snapshot (no frame yet)."""
        context = multiprocessing.get_context("spawn")
        conn, child = context.Pipe()
        self._process = process = context.Process(target=serve, args=(child, *self._args),
                                                   name="ranktop-engine", daemon=True)
        process.start()
        child.close()
        try:
            self.job_name, snapshot = _first_words(conn, process)
        except EngineFailed:
            conn.close()
            raise
        self._received = Received()  # a new engine sends everything once
        self._maps_sent: tuple[MapGeometry, ...] | None = None  # ... and is sent the maps
        snapshot = self._received.unpack(snapshot)
        self._link = Link(conn, partial(_exit_of, process), self.answer_seconds)
        return snapshot

    def restart(self) -> None:
        """A new engine process in place of one that stopped; blocking (seconds)."""
        self.close()
        self.restarts += 1
        self._start()  # what is on screen stays until its first poll

    # -- the one way to ask -------------------------------------------------------------

    def answer(self, request: Request[Answer]) -> Answer:
        """``request``'s answer, waited for (blocking: in a worker) at most its deadline."""
        return self._link.answer(request)

    async def ask(self, request: Request[Answer]) -> Answer:
        """``request``'s answer, never blocking the event loop: ``EngineSilent`` past its
        deadline, ``EngineStopped`` once the engine answers nothing at all."""
        asked = self._link.ask(request)
        answer = asyncio.wrap_future(asked)
        seconds = self._link.deadline(request)
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._link.give_up(asked)
                raise EngineSilent(f"the engine did not answer in {seconds:g} s"
                                   f" ({type(request).__name__})")
            if (await asyncio.wait({answer}, timeout=min(left, self.alive_seconds)))[0]:
                return answer.result()
            if time.monotonic() < deadline and not await self._answers():
                self._link.give_up(asked)
                raise EngineStopped(f"the engine stopped answering (not a word in"
                                    f" {self.alive_seconds:g} s)")

    async def _answers(self) -> bool:
        """Whether the engine answers at all (a gone one's failure counts as an answer:
        the request waiting says so itself)."""
        asked = self._link.ask(Alive())
        check = asyncio.wrap_future(asked)
        done, _ = await asyncio.wait({check}, timeout=self.alive_seconds)
        if not done:
            self._link.give_up(asked)
            return False
        check.exception()  # taken: a gone engine's failure is an answer here
        return True

    # -- EngineClient ------------------------------------------------------------------

    async def poll(self, maps: Sequence[MapGeometry] | None = None) -> Snapshot:
        return self._renumber(await self.ask(Poll(self._changed(maps))))

    async def settle(self, timeout: float) -> Snapshot:
        return self._renumber(await self.ask(Settle(timeout)))

    def _changed(self, maps: Sequence[MapGeometry] | None) -> tuple[MapGeometry, ...] | None:
        """``maps`` when the engine does not hold them already, else None (nothing to send)."""
        if maps is None or tuple(maps) == self._maps_sent:
            return None
        self._maps_sent = tuple(maps)
        return self._maps_sent

    def _renumber(self, snapshot: Snapshot) -> Snapshot:
        """The engine's snapshot, numbered in this console's sequence, with its rank map."""
        analysis = self._received.unpack(snapshot).analysis
        self.latest = Snapshot(self.latest.version + 1, analysis,
                               self.rank_maps.version_of(analysis.rank_map),
                               snapshot.retry_after, snapshot.error, ended=snapshot.ended,
                               levels=snapshot.levels)
        return self.latest

    async def rank_history(self, rank: int, at: float | None = None) -> RankHistory:
        return await self.ask(RankHistoryOf(rank, at))

    async def at(self, moment: float, maps: Sequence[MapGeometry] | None = None) -> Snapshot:
        """A past moment, sent whole (not against the live polls' values)."""
        try:
            snapshot = await self.ask(At(moment, self._changed(maps)))
        except EngineRefused as error:  # said in the engine's process: nothing then
            raise NothingThen(str(error)) from None
        analysis = Received().unpack(snapshot).analysis
        return Snapshot(self.latest.version, analysis,
                        self.rank_maps.version_of(analysis.rank_map), at=snapshot.at,
                        levels=snapshot.levels)

    def open_logs(self, rank_map: RankMap, rank: int) -> tuple[list[LogSource], str]:
        """The rank's logs as the engine opened them: each read a request."""
        return open_remote(self._link, rank_map, rank)

    def alert_rows(self, rank: Rank, until: float | None = None
                   ) -> tuple[list[tuple[str, ...]], str]:
        return self.answer(AlertRows(rank, until))

    def backfill(self, rank_map: RankMap, rank: int) -> tuple[dict, str]:
        return self.answer(Backfill(rank_map, rank))

    def gpu_model(self, rank: int) -> str:
        return self.answer(GpuModel(rank))

    def queries(self) -> dict[str, str]:
        return self.answer(Queries())

    def find_pipes(self) -> PipesFound:
        return self.answer(FindPipes())

    def request_dumps(self, pipes: dict[int, Path]) -> str:
        return self.answer(RequestDumps(pipes))

    def close(self) -> None:
        """End the engine process: hanging up the pipe ends it; a stuck one is killed."""
        self._link.close()
        self._process.join(CLOSE_SECONDS)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(1.0)


def _first_words(conn: Connection, process: BaseProcess) -> tuple[str, Snapshot]:
    """What a starting engine says: its job's name and first snapshot, else why it failed."""
    if not conn.poll(START_SECONDS):
        process.kill()
        raise EngineFailed(f"the engine did not start in {START_SECONDS:.0f} s")
    try:
        kind, *said = conn.recv()
    except (EOFError, OSError):
        raise EngineFailed(f"the engine ended at start ({_exit_of(process)})") from None
    if kind == "failed":
        raise EngineFailed(said[0])
    return said[0], said[1]


def _exit_of(process: BaseProcess) -> str:
    process.join(1.0)
    code = process.exitcode
    return f"exit status {code}" if code is not None else "still running"
