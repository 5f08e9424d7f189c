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
nothing, not. A blocking request not answered in ``link.ANSWER_SECONDS`` raises
``EngineSilent``, and no message over ``link.MESSAGE_BYTES`` crosses either way. A rank's
logs are read by the engine too, a page at a time (``remote_log``): this process reads no
file of the job's."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import replace
from functools import partial
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from ..core.maps.levels import MapLevels
from ..core.model import Rank, RankMap
from ..logs.tail import LogSource
from ..settings.config import Settings
from .client import EngineRefused, EngineStopped
from .link import ANSWER_SECONDS, Link
from .maps import MapGeometry
from .remote_log import open_remote
from .replay import NothingThen
from .serve import serve
from .snapshot import RankHistory, Snapshot
from .wire import UNCHANGED_RANKS, Received

START_SECONDS = 60.0  # to import, build the source and learn the ranks (a rank-map file)
ALIVE_SECONDS = 15.0  # a waiting request asks this often whether the engine answers at all
CLOSE_SECONDS = 2.0  # for the engine to end once the pipe is hung up; then it is killed


class EngineFailed(Exception):
    """The engine could not start: its source could not be made (the reason)."""


class ProcessEngine:
    """An ``EngineClient`` whose engine runs in a child process."""

    def __init__(self, settings: Settings, make_source: Callable, event_log: Path | None = None,
                 answer_seconds: float = ANSWER_SECONDS,
                 alive_seconds: float = ALIVE_SECONDS) -> None:
        self._args = (settings, make_source, event_log)
        self.answer_seconds = answer_seconds
        self.alive_seconds = alive_seconds
        self._child_version = 0  # the engine's own version of the newest snapshot
        self._child_rank_maps = 0  # ... and of its rank map
        self.restarts = 0
        self.latest = self._start()

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
        self._child_rank_maps = snapshot.rank_map_version
        self._received = Received()  # a new engine sends everything once
        snapshot = self._received.unpack(snapshot)
        self._fresh = True  # its rank map is to be compared with the one on screen
        self._link = Link(conn, partial(_exit_of, process), self.answer_seconds)
        return snapshot

    def restart(self) -> None:
        """A new engine process in place of one that stopped; blocking (seconds)."""
        self.close()
        self.restarts += 1
        self._start()  # what is on screen stays until its first poll

    # -- messages ----------------------------------------------------------------------

    def _ask(self, kind: str, *args: object) -> Future:
        return self._link.ask(kind, *args)

    async def _call(self, kind: str, *args: object) -> object:
        """The answer to a request; ``EngineStopped`` once the engine answers nothing."""
        answer = asyncio.wrap_future(self._ask(kind, *args))
        while not (await asyncio.wait({answer}, timeout=self.alive_seconds))[0]:
            if not await self._answers():
                answer.cancel()  # its answer, should one come, is dropped
                raise EngineStopped(f"the engine stopped answering (not a word in"
                                    f" {self.alive_seconds:g} s)")
        return answer.result()

    async def _answers(self) -> bool:
        """Whether the engine answers at all (a gone one's failure counts as an answer:
        the request waiting says so itself)."""
        check = asyncio.wrap_future(self._ask("alive"))
        done, _ = await asyncio.wait({check}, timeout=self.alive_seconds)
        if not done:
            check.cancel()
            return False
        check.exception()  # taken: a gone engine's failure is an answer here
        return True

    # -- EngineClient ------------------------------------------------------------------

    async def poll(self) -> Snapshot:
        return self._renumber(await self._call("poll"))

    async def settle(self, timeout: float) -> Snapshot:
        return self._renumber(await self._call("settle", timeout))

    def _renumber(self, snapshot: Snapshot) -> Snapshot:
        """The engine's snapshot, numbered in this console's sequence, with its rank map."""
        self._child_version = snapshot.version
        rank_map_version = self.latest.rank_map_version
        sent_anew = snapshot.analysis.rank_map != UNCHANGED_RANKS
        analysis = self._received.unpack(snapshot).analysis
        changed = sent_anew and snapshot.rank_map_version != self._child_rank_maps
        if (changed or self._fresh) and analysis.rank_map != self.latest.analysis.rank_map:
            rank_map_version += 1
        self._fresh = False
        self._child_rank_maps = snapshot.rank_map_version
        self.latest = Snapshot(self.latest.version + 1, analysis, rank_map_version,
                               snapshot.retry_after, snapshot.error, ended=snapshot.ended)
        return self.latest

    async def plan_maps(self, version: int,
                        maps: Sequence[MapGeometry]) -> Mapping[str, MapLevels]:
        if version != self.latest.version:
            return {}
        planned = await self._call("plan_maps", self._child_version, tuple(maps))
        # Planned against copies of the maps' views: tie them back to the views themselves.
        views = {geometry.map_id: geometry.view for geometry in maps}
        return {map_id: replace(levels, view=views[map_id])
                for map_id, levels in planned.items()}  # type: ignore[union-attr]

    async def rank_history(self, rank: int, at: float | None = None) -> RankHistory:
        return await self._call("rank_history", rank, at)  # type: ignore[return-value]

    async def at(self, moment: float) -> Snapshot:
        """A past moment, sent whole (not against the live polls' values)."""
        try:
            snapshot = await self._call("at", moment)
        except EngineRefused as error:  # said in the engine's process: nothing then
            raise NothingThen(str(error)) from None
        analysis = Received().unpack(snapshot).analysis  # type: ignore[arg-type]
        latest = self.latest
        return Snapshot(latest.version, analysis, latest.rank_map_version,
                        at=snapshot.at)  # type: ignore[union-attr]

    def open_logs(self, rank_map: RankMap, rank: int) -> tuple[list[LogSource], str]:
        """The rank's logs as the engine opened them: each read a request."""
        return open_remote(self._link, rank_map, rank)

    def alert_rows(self, rank: Rank) -> tuple[list[tuple[str, ...]], str]:
        return self._link.answer("alert_rows", rank)  # type: ignore[return-value]

    def backfill(self, rank_map: RankMap, rank: int) -> tuple[dict, str]:
        return self._link.answer("backfill", rank_map, rank)  # type: ignore[return-value]

    def gpu_model(self, rank: int) -> str:
        return self._link.answer("gpu_model", rank)  # type: ignore[return-value]

    def queries(self) -> dict[str, str]:
        return self._link.answer("queries")  # type: ignore[return-value]

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
