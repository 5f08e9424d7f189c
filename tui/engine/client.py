"""The one small interface the screens talk to the engine through.

Screens hold an ``EngineClient``, never a source: they ask for a poll's snapshot (their maps'
levels planned into it), a past moment's, and, for one rank, its logs, alerts, earlier
history and GPU model. Every answer is a plain value."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ..core.model import Rank, RankMap
from ..logs.tail import LogSource
from .maps import MapGeometry
from .protocol import PipesFound
from .snapshot import RankHistory, Snapshot


class EngineStopped(Exception):
    """The engine went away (its process crashed or was killed): restart it."""


class EngineSilent(Exception):
    """The engine did not answer a request in time (it may be hung): say so, go on."""


class EngineRefused(RuntimeError):
    """The engine could not answer a request; its one line says why (an error there, a log
    no longer open, a message too big to cross)."""


# What any request to the engine may raise besides its own errors: to say on screen.
ENGINE_FAILURES = (EngineStopped, EngineSilent, EngineRefused)


class RankRequests(Protocol):
    """What the rank screen asks for one rank; each call may block (run it in a worker) and
    may raise one of ``ENGINE_FAILURES``. The logs' reads may too, and they are to be closed
    when no longer shown (an engine in another process keeps them open)."""

    def open_logs(self, rank_map: RankMap, rank: int) -> tuple[list[LogSource], str]: ...

    def alert_rows(self, rank: Rank, until: float | None = None
                   ) -> tuple[list[tuple[str, ...]], str]: ...

    def backfill(self, rank_map: RankMap, rank: int) -> tuple[dict, str]: ...

    def gpu_model(self, rank: int) -> str: ...


class DumpRequests(Protocol):
    """The ranks' Flight Recorder dump pipes, found and written by the engine (blocking;
    ``EngineRefused`` says why not: off, a bad pattern, a bundle that is read-only)."""

    def find_pipes(self) -> PipesFound: ...

    def request_dumps(self, pipes: dict[int, Path]) -> str: ...


class EngineClient(RankRequests, DumpRequests, Protocol):
    """The engine as the UI sees it."""

    job_name: str

    @property
    def latest(self) -> Snapshot:
        """The newest snapshot (version 0, without a frame, before the first poll)."""
        ...

    async def poll(self, maps: Sequence[MapGeometry] | None = None) -> Snapshot:
        """Poll the source once, analyse what it gave and plan the levels of ``maps`` (the
        cluster maps as laid out now; None: as last given) into the snapshot; never blocks
        the event loop."""
        ...

    async def settle(self, timeout: float) -> Snapshot:
        """The newest snapshot with the hang triage it asked for, waiting up to ``timeout``."""
        ...

    async def rank_history(self, rank: int, at: float | None = None) -> RankHistory:
        """``rank``'s share of the newest snapshot's history, or of the moment ``at``'s
        (a snapshot from an engine in another process carries none)."""
        ...

    async def at(self, moment: float, maps: Sequence[MapGeometry] | None = None) -> Snapshot:
        """The console as it was at ``moment`` (epoch seconds, brought down to the refresh
        grid: the snapshot's ``at``), replayed from the source's history with the verdicts
        the live console showed then, and the levels of ``maps`` as ``poll`` plans them.
        Its ``version`` is the newest live one's. Raises
        ``replay.NothingThen`` (one line to show) when the source has nothing then."""
        ...

    def queries(self) -> dict[str, str]:
        """The queries of a poll, by what each is for, as the source sends them (blocking)."""
        ...

    def restart(self) -> None:
        """A new engine in place of one that stopped (blocking)."""
        ...

    def close(self) -> None:
        """Let go of what the source holds (NVML), and of the engine's process if it has one."""
        ...
