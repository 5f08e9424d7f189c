"""The contract between the UI and its engine: one frozen request type per kind of question,
each naming the type of its answer (``Request[Answer]``) and the seconds it may take
(``deadline``). An engine apart answers them through one dispatch table (``serve.HANDLERS``);
the UI asks them through one ``ask`` (``process.ProcessEngine``), which raises
``client.EngineSilent`` when the deadline passes, whatever the request.

Deadlines are generous where the work is: a poll may begin with a catch-up on the job's past,
a past moment is a replay, a rank's alerts ask HTTP servers. Past them, the engine is taken
to be stuck, and the app says so and restarts it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Generic, NamedTuple, TypeVar

from ..core.model import Rank, RankMap
from .maps import MapGeometry
from .snapshot import RankHistory, Snapshot

ANSWER_SECONDS = 60.0  # a rank's alerts ask HTTP servers; a log read, a GPU model, less
ALIVE_SECONDS = 15.0  # "do you answer at all?": nothing to do but answer
HISTORY_SECONDS = 30.0  # one rank's share of the history held: milliseconds, unless stuck
POLL_SECONDS = 600.0  # a first poll may catch up on the job's past (minutes at 16k ranks)
REPLAY_SECONDS = 300.0  # a past moment: the window before it fetched and replayed

Answer = TypeVar("Answer")

BUNDLE_READ_ONLY = "a bundle is read-only: it asks no rank for anything"


class Page(NamedTuple):
    """Part of what one read of a log gave: lines as (text, kind, partial, origin)."""

    lines: tuple[tuple[str, str, bool, str], ...]
    status: str  # the log's, after the read
    more: bool  # the read gave more lines: ask for the next page


class PipesFound(NamedTuple):
    """The ranks' dump pipes found, as the confirmation says them, and the FIFOs among them
    (the only paths ``RequestDumps`` would write to)."""

    described: str
    fifos: dict[int, Path]


@dataclass(frozen=True)
class Request(Generic[Answer]):
    """A question to the engine whose answer is an ``Answer``, due within ``deadline``."""

    deadline: ClassVar[float] = ANSWER_SECONDS

    @property
    def seconds(self) -> float:
        """How long this request's answer may take."""
        return self.deadline


@dataclass(frozen=True)
class Alive(Request[bool]):
    """Whether the engine answers at all, whatever else it is doing."""

    deadline: ClassVar[float] = ALIVE_SECONDS


@dataclass(frozen=True)
class Poll(Request[Snapshot]):
    """Poll the source once, analyse what it gave and plan the maps' levels; ``maps``: the
    maps as the screen now lays them out, sent only when they changed (None: as before)."""

    maps: tuple[MapGeometry, ...] | None = None
    deadline: ClassVar[float] = POLL_SECONDS


@dataclass(frozen=True)
class Settle(Request[Snapshot]):
    """The newest snapshot with the hang triage it asked for, waiting up to ``timeout``."""

    timeout: float

    @property
    def seconds(self) -> float:
        return self.timeout + ANSWER_SECONDS


@dataclass(frozen=True)
class At(Request[Snapshot]):
    """The console as it was at ``moment`` (epoch seconds), replayed, its maps' levels
    planned; ``maps`` as for ``Poll``."""

    moment: float
    maps: tuple[MapGeometry, ...] | None = None
    deadline: ClassVar[float] = REPLAY_SECONDS


@dataclass(frozen=True)
class RankHistoryOf(Request[RankHistory]):
    """``rank``'s share of the newest snapshot's history, or of the moment ``at``'s."""

    rank: int
    at: float | None = None

    @property
    def seconds(self) -> float:
        return HISTORY_SECONDS if self.at is None else REPLAY_SECONDS


@dataclass(frozen=True)
class AlertRows(Request[tuple[list[tuple[str, ...]], str]]):
    """``rank``'s alerts as rows, and a note on where they came from; with ``until``, those
    of the hour before that moment, the ones that began after it left out."""

    rank: Rank
    until: float | None = None


@dataclass(frozen=True)
class Backfill(Request[tuple[dict, str]]):
    """``rank``'s metrics before the console started, and a note."""

    rank_map: RankMap
    rank: int


@dataclass(frozen=True)
class GpuModel(Request[str]):
    rank: int


@dataclass(frozen=True)
class Queries(Request[dict[str, str]]):
    """The queries of a poll, by what each is for."""


@dataclass(frozen=True)
class OpenLogs(Request[tuple[list[tuple[int, str]], str]]):
    """``rank``'s logs opened by the engine, as (id, name), and a note on what was found."""

    rank_map: RankMap
    rank: int


@dataclass(frozen=True)
class LogTail(Request[Page]):
    log_id: int
    lines: int


@dataclass(frozen=True)
class LogFollow(Request[Page]):
    log_id: int


@dataclass(frozen=True)
class LogMore(Request[Page]):
    """The next page of the last read of ``log_id``."""

    log_id: int


@dataclass(frozen=True)
class LogSizes(Request[dict[str, int]]):
    """The size of each file ``log_id`` reads, where its reads end (for a bundle)."""

    log_id: int


@dataclass(frozen=True)
class LogClose(Request[None]):
    log_id: int


@dataclass(frozen=True)
class FindPipes(Request[PipesFound]):
    """The ranks' Flight Recorder dump pipes, as configured (a bundle refuses)."""


@dataclass(frozen=True)
class RequestDumps(Request[str]):
    """Write one byte to each of ``pipes`` (FIFOs the user confirmed); the summary."""

    pipes: dict[int, Path]
