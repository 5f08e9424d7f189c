"""Past moments from the backend's own history: a poll at any time, as it would have gone.

The Prometheus source gives a past frame by polling a copy of itself whose clock stands at
that moment and whose client answers each instant query as the backend would have then.
The copy reads the job exactly as a live poll does (the same queries, rank join, freshness
marks and job values, under the same byte budget per moment), and the live source is
never touched.

Asking an instant query per query per moment would cost a request each; instead each query
is asked as a range query over a window of moments: a range query is the instant query
evaluated at each of its steps (``time()`` included). Windows are aligned on the moments'
grid (a window of ``n`` steps starts at a multiple of ``n`` steps), so that neighbouring
moments, and the replays of neighbouring moments, share them; the answers are kept in a
``RangeCache`` that the live source holds between replays (each series' labels once, and
its value at each moment; the least recently used let go past ``HELD_BYTES``). Windows
hold fewer moments the more ranks there are, one (instant queries) at 16,384.

A moment is an instant query at its time where no window serves: while no rank is known
(a window is sized by them), every moment of the last ``VICTORIA_RECENT_SECONDS`` on
VictoriaMetrics (it answers a range of one point with nothing, and leaves out of a range
the points newer than its latency offset, 30 s by default; ``latency_offset`` is honoured
by its instant queries only), and every moment once a range query failed (too large, too
slow; until the cache is let go). So is every moment of a window whose answer is off the
grid asked (VictoriaMetrics aligns a long range's start to its step unless told not to),
or doubtful: a series with two samples at one moment, its samples out of order, or two
series of the same labels are not replayed as fact, and the cache says so
(``take_said``) for the replay to show.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...core.model import Frame, RankMap
from ...settings.config import Settings
from ..bounded_body import ByteBudget
from .client import (
    VICTORIA_METRICS,
    WHOLE,
    PromClient,
    QueryError,
    Series,
    Vector,
)
from .decode import HeldRecord, Notes
from .finder import Finder

if TYPE_CHECKING:
    from .source import PrometheusSource

# What the cache may hold, every query and window together: each series' labels once (about
# 550 bytes measured with a GPU's UUID twice), and 32 bytes a moment. At 16,384 ranks two
# moments would pass it: each moment is read as a live poll reads it, a few answers at once.
HELD_BYTES = 200_000_000
SERIES_BYTES = 600
VALUE_BYTES = 32
MAX_WINDOW_STEPS = 30  # moments a range query covers at most (Prometheus allows 11,000)
CHUNK_BYTES = 512_000_000  # what a range answer may take, inflated, asked without a budget
SPACING_SLACK = 0.001  # seconds: moments this close to a run's spacing continue it
VICTORIA_RECENT_SECONDS = 60.0  # past its default latency offset (30 s), with a margin
DOUBTS_SAID = "read moment by moment"
KEPT_IDLE_SECONDS = 300.0  # windows are let go once no replay asked for one this long


def window_steps(ranks: int, queries: int) -> int:
    """How many moments a window may hold, so that one window of every query (a series per
    rank and query) holds about HELD_BYTES."""
    per_series = HELD_BYTES // (max(1, ranks) * max(1, queries))
    return max(1, min(MAX_WINDOW_STEPS, (per_series - SERIES_BYTES) // VALUE_BYTES))


def runs(times: Sequence[float]) -> Iterator[list[float]]:
    """``times`` (ascending) in evenly spaced runs; a moment asked twice begins a run."""
    run: list[float] = []
    for moment in times:
        spaced = len(run) < 2 or abs((moment - run[-1]) - (run[1] - run[0])) <= SPACING_SLACK
        if run and (not spaced or moment <= run[-1]):
            yield run
            run = []
        run.append(moment)
    if run:
        yield run


@dataclass(frozen=True)
class Window:
    """``count`` moments ``step`` apart from ``start``: one range query's."""

    start: float
    step: float
    count: int

    @property
    def end(self) -> float:
        return self.start + (self.count - 1) * self.step

    def moments(self) -> list[float]:
        return [self.start + i * self.step for i in range(self.count)]


def window_of(moment: float, step: float, steps: int) -> Window:
    """The window of ``steps`` moments on ``moment``'s grid (``step`` apart, through it)
    that holds it: aligned, so every moment of the grid falls in one window only. It is
    reckoned in whole milliseconds, as the backend reads the times it is sent and steps
    through a range: its moments are those the backend answers at, the asked one among
    them (a moment polled live is stamped to the microsecond)."""
    at, every = _ms(moment), max(1, _ms(step))
    start = at - (at // every % steps) * every
    return Window(start / 1000, every / 1000, steps)


def past_frames(make_copy: Callable[[RangeClient], PrometheusSource], client: PromClient,
                times: Sequence[float], ranks: int, now: float, cache: RangeCache,
                grid: float) -> Iterator[tuple[Frame, RankMap]]:
    """The frame a poll would have given at each of ``times`` (oldest first), polled by a
    copy of the source (``make_copy``) reading through a RangeClient over ``client`` and
    ``cache``; a moment with no values at all (before the job, past the backend's
    retention) gives none. Windows are sized for ``ranks`` (what the live source knows),
    or the ranks the copy has learned; while neither knows any, a window is one moment.
    A lone moment is read on the ``grid`` (the refresh step). ``now``: the wall clock,
    for what VictoriaMetrics still hides from a range."""
    recent = now - VICTORIA_RECENT_SECONDS if client.backend == VICTORIA_METRICS else now
    ranged = RangeClient(client, recent, cache)
    copy = make_copy(ranged)

    def steps() -> int:
        known = max(ranks, len(copy.rank_map))
        return window_steps(known, len(copy.queries())) if known else 1

    ranged.steps = steps
    for run in runs(times):
        ranged.step = run[1] - run[0] if len(run) > 1 else grid
        for moment in run:
            ranged.at(moment)
            frame = copy.poll_now()
            if any(frame.values.values()):
                yield frame, copy.rank_map


@dataclass
class _Held:
    """One query's answers over a window: each series' labels and its value at each of
    ``moments`` (None: no sample then)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    loaded: bool = False
    by_instants: bool = False  # answers off the grid asked, or doubtful
    moments: dict[int, int] = field(default_factory=dict)  # moment (ms) -> its index
    series: list[tuple[Mapping[str, str], list[float | None]]] = field(default_factory=list)
    notes: Notes = WHOLE  # what the backend said beside the range (partial: its stores)

    @property
    def bytes(self) -> int:
        return len(self.series) * (SERIES_BYTES + len(self.moments) * VALUE_BYTES)

    def at(self, moment: float) -> Vector:
        """The samples at ``moment``, as an instant query then gives them."""
        index = self.moments.get(_ms(moment))
        if index is None:
            return Vector([], self.notes)
        return Vector([HeldRecord(metric=labels, value=(moment, value))
                       for labels, values in self.series
                       if (value := values[index]) is not None], self.notes)


_Key = tuple[str, Window]


class RangeCache:
    """Range answers by query and window, kept between replays within ``held_bytes`` (the
    least recently used let go first) and while replays go on (``let_go_if_idle``), and
    the doubts found in them, to be said."""

    def __init__(self, held_bytes: int = HELD_BYTES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.held_bytes = held_bytes
        self.clock = clock
        self._held: OrderedDict[_Key, _Held] = OrderedDict()
        self._said: set[str] = set()
        self._lock = threading.Lock()
        self._used = clock()
        self.refused = False  # a range query failed (too large, too slow): instants only

    def __len__(self) -> int:
        return len(self._held)

    def holding(self, key: _Key) -> _Held:
        """The answers kept for ``key`` (loaded or not yet), now the most recently used."""
        with self._lock:
            self._used = self.clock()
            held = self._held.get(key)
            if held is None:
                held = self._held[key] = _Held()
            self._held.move_to_end(key)
            return held

    def covering(self, promql: str, window: Window, moment: float) -> _Key | None:
        """A window held for ``promql`` from ``window``'s start on its grid whose answers
        hold ``moment`` (the newest window is cut where now was when it was read: a later
        read cuts it further on, and must not read it all again for a moment it holds)."""
        with self._lock:
            for (query, held_window), held in reversed(self._held.items()):
                if (query == promql and held.loaded and not held.by_instants
                        and held_window.start == window.start
                        and held_window.step == window.step
                        and _ms(moment) in held.moments):
                    return query, held_window
        return None

    def loaded(self, key: _Key) -> None:
        """``key``'s answers are in: the least recently used others go while all of them
        together pass the bound."""
        with self._lock:
            total = sum(held.bytes for held in self._held.values())
            for other in list(self._held):
                if total <= self.held_bytes or other == key:
                    break
                total -= self._held.pop(other).bytes

    def say(self, doubt: str) -> None:
        with self._lock:
            self._said.add(doubt)

    def take_said(self) -> tuple[str, ...]:
        """The doubts found since this was last asked (each once)."""
        with self._lock:
            said, self._said = self._said, set()
        return tuple(sorted(said))

    def let_go_if_idle(self, seconds: float = KEPT_IDLE_SECONDS) -> None:
        """Let go of every window once none was asked for ``seconds``: a console back at
        the live job keeps nothing of the past it scrubbed through."""
        if self.clock() - self._used > seconds:
            self.let_go()

    def let_go(self) -> None:
        """Let go of every window now (and read ranges again after one failed)."""
        with self._lock:
            self._held.clear()
            self.refused = False


class RangeClient:
    """A client that answers instant queries at ``moment`` from range queries over the
    window of ``steps()`` moments ``step`` apart that holds it, kept in ``cache``, through
    the real ``client``; moments after ``recent_after``, and every moment without a cache
    (or once a range query failed), are read by instant queries."""

    def __init__(self, client: PromClient, recent_after: float = float("inf"),
                 cache: RangeCache | None = None) -> None:
        self.client = client
        self.backend = client.backend
        self.recent_after = recent_after
        self.cache = cache
        self.moment = float("-inf")
        self.step = 0.0
        self.steps: Callable[[], int] = lambda: 1

    def now(self) -> float:
        """The clock of the source that reads through this client."""
        return self.moment

    def at(self, moment: float) -> None:
        """Answer at ``moment`` from now on."""
        self.moment = moment

    def query(self, promql: str, budget: ByteBudget | None = None,
              at: float | None = None) -> Vector:
        moment = self.moment if at is None else at
        window = self._window() if moment == self.moment else None
        if window is None or self.cache is None:
            return self.client.query(promql, budget, at=moment)
        key = self.cache.covering(promql, window, moment) or (promql, window)
        held = self.cache.holding(key)
        with held.lock:
            if not held.loaded:
                try:
                    self._load(promql, held, window, budget or ByteBudget(CHUNK_BYTES))
                except QueryError:  # too large, or too slow: moments are read alone
                    self.cache.refused = True
                    raise
                self.cache.loaded(key)
        if held.by_instants:
            return self.client.query(promql, budget, at=moment)
        return held.at(moment)

    def _window(self) -> Window | None:
        """The window the current moment is read from; None: read it by itself."""
        steps = self.steps()
        if self.cache is None or self.cache.refused or steps < 2 or self.step <= 0 \
                or self.moment > self.recent_after:
            return None
        window = window_of(self.moment, self.step, steps)
        if window.end > self.recent_after:  # the newest window, as far as it goes yet
            window = Window(window.start, window.step,
                            int((self.recent_after - window.start) // window.step) + 1)
        return window if window.count > 1 else None

    def _load(self, promql: str, held: _Held, window: Window, budget: ByteBudget) -> None:
        """The query's answers over ``window``, by moment; the range counts against
        ``budget``, the asking moment's, as a live poll's answers do."""
        series = self.client.query_range(promql, window.start, window.end, window.step,
                                         budget)
        held.moments = {_ms(t): i for i, t in enumerate(window.moments())}
        aligned, doubt = _aligned(series, held.moments)
        if doubt and self.cache is not None:
            self.cache.say(f"{doubt} in the backend's answers: {DOUBTS_SAID}")
        held.by_instants, held.series = aligned is None, aligned or []
        held.notes = getattr(series, "notes", WHOLE)
        held.loaded = True


class PastFinder(Finder):
    """A copy's finder: nothing is looked for in the past (the live source's settings
    hold what its finds gave), and the metrics found are named as the live one names them."""

    def after_poll(self, settings: Settings, job_empty: bool, dcgm_empty: bool
                   ) -> Settings | None:
        return None


def _aligned(series: list[Series], moments: dict[int, int]
             ) -> tuple[list[tuple[Mapping[str, str], list[float | None]]] | None, str]:
    """Each series' labels and its value at each of ``moments`` (by index); None when a
    sample fell on another moment (the backend moved the range), or the answer is doubtful
    (what is doubtful, said)."""
    found = []
    seen: set[frozenset] = set()
    for one in series:
        labels = frozenset(one.labels.items())
        if labels in seen:
            return None, "series twice"
        seen.add(labels)
        values: list[float | None] = [None] * len(moments)
        last = -1
        for stamp, value in one.points:
            index = moments.get(_ms(stamp))
            if index is None:
                return None, ""
            if index <= last:
                return None, "samples out of order" if index < last else "samples twice"
            values[index], last = value, index
        found.append((one.labels, values))
    return found, ""


def _ms(moment: float) -> int:
    """A moment as the backend writes it back: to the millisecond."""
    return round(moment * 1000)
