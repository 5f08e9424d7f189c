"""Past moments from the backend's own history: a poll at any time, as it would have gone.

The Prometheus source gives a past frame by polling a copy of itself whose clock stands at
that moment and whose client answers each instant query as the backend would have then.
The copy reads the job exactly as a live poll does (the same queries, rank join, freshness
marks and job values), and the live source is never touched.

Asking an instant query per query per moment would cost a request each; instead the moments
are taken a chunk at a time (a few moments evenly spaced, fewer at many ranks), and the
first time a query is asked in a chunk it is asked once as a range query over the rest of
the chunk, on the chunk's own grid: a range query is the instant query evaluated at each of
its steps (``time()`` included). Each step's samples are picked by their timestamp; where
the backend moved the range off the grid asked for (VictoriaMetrics aligns a long range's
start to its step unless told not to), that query falls back to instant queries at the
moments themselves. A lone moment is an instant query at its time too, and so is every
moment of the last ``VICTORIA_RECENT_SECONDS`` on VictoriaMetrics: it answers a range of
one point with nothing, and leaves out of a range the points newer than its latency offset
(30 s by default; ``latency_offset`` is honoured by its instant queries only). Only the
current chunk's answers are held (each series' labels once, and its value at each moment),
and of them only the queries the latest moment asked: a query the copy stops sending (it
learned a narrower one) is let go at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ranktop.tui.core.model import Frame, RankMap
from ranktop.tui.settings.config import Settings
from ranktop.tui.sources.bounded_body import ByteBudget
from ranktop.tui.sources.finder import Finder
from ranktop.tui.sources.prom_client import VICTORIA_METRICS, PromClient, Series, Vector
from ranktop.tui.sources.prom_decode import Record

if TYPE_CHECKING:
    from ranktop.tui.sources.prometheus import PrometheusSource

# What a chunk's answers may hold, every query together: each series' labels once (about
# 550 bytes measured with a GPU's UUID twice), and 32 bytes a moment. At 16,384 ranks two
# moments would pass it: each moment is read as a live poll reads it, a few answers at once.
HELD_BYTES = 200_000_000
SERIES_BYTES = 600
VALUE_BYTES = 32
MAX_CHUNK_STEPS = 30  # moments a range query covers at most (Prometheus allows 11,000)
CHUNK_BYTES = 512_000_000  # what a range answer may take, inflated, asked without a budget
SPACING_SLACK = 0.001  # seconds: moments this close to a chunk's spacing continue it
VICTORIA_RECENT_SECONDS = 60.0  # past its default latency offset (30 s), with a margin


def chunk_steps(ranks: int, queries: int) -> int:
    """How many moments a chunk may hold, so that its answers (a series per rank and
    query) hold about HELD_BYTES."""
    per_series = HELD_BYTES // (max(1, ranks) * max(1, queries))
    return max(1, min(MAX_CHUNK_STEPS, (per_series - SERIES_BYTES) // VALUE_BYTES))


def chunks(times: Sequence[float], most: Callable[[], int]) -> Iterator[list[float]]:
    """``times`` (ascending) in evenly spaced runs, each of at most ``most()`` moments (asked
    as each run begins: after the one before was read); a moment asked twice begins a run."""
    run: list[float] = []
    limit = 1
    for moment in times:
        spaced = len(run) < 2 or abs((moment - run[-1]) - (run[1] - run[0])) <= SPACING_SLACK
        if run and (len(run) >= limit or not spaced or moment <= run[-1]):
            yield run
            run = []
        if not run:
            limit = most()
        run.append(moment)
    if run:
        yield run


def past_frames(make_copy: Callable[[RangeClient], PrometheusSource], client: PromClient,
                times: Sequence[float], ranks: int, now: float
                ) -> Iterator[tuple[Frame, RankMap]]:
    """The frame a poll would have given at each of ``times`` (oldest first), polled by a
    copy of the source (``make_copy``) reading through a RangeClient over ``client``; a
    moment with no values at all (before the job, past the backend's retention) gives
    none. Chunks are sized for ``ranks`` (what the live source knows), or the ranks the
    copy has learned; while neither knows any, a chunk is one moment. ``now``: the wall
    clock, for what VictoriaMetrics still hides from a range."""
    recent = now - VICTORIA_RECENT_SECONDS if client.backend == VICTORIA_METRICS else now
    ranged = RangeClient(client, recent)
    copy = make_copy(ranged)

    def most() -> int:
        known = max(ranks, len(copy.rank_map))
        return chunk_steps(known, len(copy.queries())) if known else 1

    for chunk in chunks(times, most):
        ranged.start_chunk(chunk)
        for moment in chunk:
            ranged.at(moment)
            frame = copy.poll_now()
            if any(frame.values.values()):
                yield frame, copy.rank_map
    ranged.start_chunk([])


@dataclass
class _Held:
    """One query's answers over the rest of a chunk: each series' labels and its value at
    each of ``moments`` (None: no sample then)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    loaded: bool = False
    by_instants: bool = False  # a lone moment left, or answers off the grid asked for
    moments: dict[int, int] = field(default_factory=dict)  # moment (ms) -> its index
    series: list[tuple[Mapping[str, str], list[float | None]]] = field(default_factory=list)
    asked_at: float = float("-inf")

    def at(self, moment: float) -> Vector:
        """The samples at ``moment``, as an instant query then gives them."""
        index = self.moments.get(_ms(moment))
        if index is None:
            return Vector([])
        return Vector([Record(metric=labels, value=(moment, values[index]))
                       for labels, values in self.series if values[index] is not None])


class RangeClient:
    """A client that answers instant queries at ``moment`` from range queries over the
    chunk it was given (``start_chunk``), through the real ``client``; moments after
    ``recent_after`` are read by instant queries."""

    def __init__(self, client: PromClient, recent_after: float = float("inf")) -> None:
        self.client = client
        self.backend = client.backend
        self.recent_after = recent_after
        self.moment = float("-inf")
        self._ranged: list[float] = []  # the chunk's moments read by range queries
        self._held: dict[str, _Held] = {}
        self._lock = threading.Lock()

    def now(self) -> float:
        """The clock of the source that reads through this client."""
        return self.moment

    def start_chunk(self, chunk: list[float]) -> None:
        """Answer for the moments of ``chunk`` from now on; what was held is let go."""
        ranged = [t for t in chunk if t <= self.recent_after]
        self._ranged = ranged if len(ranged) > 1 else []
        self._held = {}

    def at(self, moment: float) -> None:
        """Answer at ``moment`` (one of the chunk's) from now on; the queries the last
        moment did not ask are let go."""
        last = self.moment
        self.moment = moment
        with self._lock:
            self._held = {q: held for q, held in self._held.items() if held.asked_at == last}

    def query(self, promql: str, budget: ByteBudget | None = None,
              at: float | None = None) -> Vector:
        moment = self.moment if at is None else at
        if moment not in self._ranged:
            return self.client.query(promql, budget, at=moment)
        held = self._holding(promql)
        with held.lock:
            held.asked_at = moment
            if not held.loaded:
                self._load(promql, held, budget or ByteBudget(CHUNK_BYTES))
        if held.by_instants:
            return self.client.query(promql, budget, at=moment)
        return held.at(moment)

    def _holding(self, promql: str) -> _Held:
        with self._lock:
            held = self._held.get(promql)
            if held is None:
                held = self._held[promql] = _Held()
            return held

    def _load(self, promql: str, held: _Held, budget: ByteBudget) -> None:
        """The query's answers from the current moment to the end of the chunk's ranged
        moments, by moment (none when only this one is left: read by instant queries); the
        range counts against ``budget``, the moment's as a live poll's."""
        moments = [t for t in self._ranged if t >= self.moment]
        if len(moments) > 1:
            series = self.client.query_range(promql, moments[0], moments[-1],
                                             moments[1] - moments[0], budget)
            held.moments = {_ms(t): i for i, t in enumerate(moments)}
            aligned = _aligned(series, held.moments)
            held.by_instants, held.series = aligned is None, aligned or []
        else:
            held.by_instants = True
        held.loaded = True


class PastFinder(Finder):
    """A copy's finder: nothing is looked for in the past (the live source's settings
    hold what its finds gave), and the metrics found are named as the live one names them."""

    def after_poll(self, settings: Settings, job_empty: bool, dcgm_empty: bool
                   ) -> Settings | None:
        return None


def _aligned(series: list[Series], moments: dict[int, int]
             ) -> list[tuple[Mapping[str, str], list[float | None]]] | None:
    """Each series' labels and its value at each of ``moments`` (by index); None when a
    sample fell on another moment (the backend moved the range)."""
    found = []
    for one in series:
        values: list[float | None] = [None] * len(moments)
        for stamp, value in one.points:
            index = moments.get(_ms(stamp))
            if index is None:
                return None
            values[index] = value
        found.append((one.labels, values))
    return found


def _ms(moment: float) -> int:
    """A moment as the backend writes it back: to the millisecond."""
    return round(moment * 1000)
