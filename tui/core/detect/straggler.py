"""The straggler verdict: which ranks are slower than the others, by how much, for how long,
what they form on the map, and what goes with it on their GPUs.

A rank is hot when its compute time (else its SM activity) is at least ``straggler_factor``
times the median and ``straggler_mads`` median absolute deviations above it. The impact
policy published by TraceML: 10 % slower warns, 20 % is critical; a hot rank must stay hot
for ``straggler_seconds`` to be confirmed. Hot ranks that form a stage (a row of the maps)
or a replica / node (a column) are one anomaly, on the first rank of it; hot ranks that keep
changing are one anomaly of the whole job: data or sequence-length imbalance.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import replace
from statistics import median

from ..anomaly import EVERY_KEY, Anomaly, Hold
from ..config_values import DetectSettings
from ..metrics import FrameSummaries
from ..model import Frame, RankMap, is_missing
from ..parallelism import Parallelism, for_job
from .cause import Medians, causes, said
from .hardware import Ledger
from .hotspots import MOVING_SECONDS, Grid, Shape, Wander

MAD_TO_SIGMA = 1.4826  # a median absolute deviation, scaled to a normal's standard deviation
FAR_OUTSIDE = 3  # this many times the bar of deviations: far outside the ranks' spread
MANY_SCATTERED = 8  # more scattered hot ranks than this are one anomaly of the job
STAYS_HOT = 0.8  # a hot rank stays hot down to this share of the bar (no flicker at the bar)
LAPSE_POLLS = 2  # a steady condition missing for up to this many polls goes on (noise)
STEADY_SECONDS = 6.0  # held this long, a condition is steady (a one-poll blip is not)


class Stragglers:
    """The straggler detector; ``update`` returns the straggler anomalies of a frame."""

    def __init__(self, settings: DetectSettings, parallelism: Parallelism | None = None
                 ) -> None:
        self.s = settings
        self.parallelism = parallelism
        self.hold = Hold("straggler", "warning", settings.straggler_seconds)
        self.wander = Wander()
        self._grid: tuple[RankMap | None, Grid | None] = (None, None)
        self._hot: set[int] = set()
        self._lines: set[tuple[str, int]] = set()  # rows and columns hot at the last poll
        self._peak: dict[object, float] = {}  # the highest impact of each condition so far
        self._last: dict[object, tuple[str, float]] = {}  # the conditions of the last poll
        self._missed: dict[object, int] = {}  # polls in a row each condition has lapsed
        self._details: dict[object, str] = {}  # each condition's figures for its detail view

    def grid(self, rank_map: RankMap) -> Grid:
        """The rows and columns of the maps for ``rank_map`` (by node when the parallelism
        given is not this job's)."""
        if self._grid[0] is not rank_map:
            parallelism = for_job(self.parallelism, len(rank_map))[0]
            self._grid = (rank_map, Grid(rank_map, parallelism))
        return self._grid[1]

    def update(self, frame: Frame, rank_map: RankMap, progressing: bool,
               ledger: Ledger | None = None, summaries: FrameSummaries | None = None
               ) -> list[Anomaly]:
        """A job that is not computing has no straggler: while its step does not move, its
        per-step times are the last step's, frozen. ``summaries``: the frame's, when
        already worked out."""
        summaries = summaries if summaries is not None else FrameSummaries(frame)
        name, metric, values = _measure(frame, self.s.sm_active_pct, summaries)
        gap = EVERY_KEY if metric not in frame.values else frame.without((metric,), len(rank_map))
        if values is None or not progressing:
            return self._none(frame.time, gap if progressing else ())
        present = [v for v in values if v == v]  # not NaN
        middle = summaries.median(metric) if len(present) >= 3 else float("nan")
        if is_missing(middle) or middle <= 0:
            return self._none(frame.time, gap if is_missing(middle) else ())
        spread = MAD_TO_SIGMA * median(abs(v - middle) for v in present)
        floor = max(self.s.straggler_mads * spread, 1e-9)
        grid = self.grid(rank_map)
        hot = self._hot_ranks(values, middle, floor)
        hot.update(self._hot_lines(values, middle, grid))
        self._hot = set(hot)
        self.wander.update(frame.time, hot)
        wandering = self.wander.wandering
        staying = self.wander.steady & set(hot) if wandering else set(hot)
        conditions: dict[object, tuple[str, float]] = {}
        medians = Medians(frame)
        for shape in grid.shapes(staying):
            conditions.update(self._conditions(frame, shape, grid, hot, name, middle, spread,
                                               ledger, medians))
        if wandering:
            conditions[None] = self._wandering(hot, name, middle)
        return self._judged(frame.time, conditions, gap)

    def _hot_ranks(self, values: list[float], middle: float, floor: float
                   ) -> dict[int, float]:
        """Ranks over the bar and the MAD floor (a hot rank stays hot a little under both).
        A missing value (NaN) compares false: it is never hot."""
        bar = middle * (self.s.straggler_factor - 1)
        hot = {r: v for r, v in enumerate(values) if v - middle >= bar and v - middle > floor}
        for rank in self._hot:
            value = values[rank] if rank < len(values) else float("nan")
            if value - middle >= STAYS_HOT * bar and value - middle > STAYS_HOT * floor:
                hot[rank] = value
        return hot

    def _hot_lines(self, values: list[float], middle: float, grid: Grid) -> dict[int, float]:
        """Every rank of a row or column whose lower median is over the bar (a line half
        of whose ranks are slow is not hot as a whole): the median of many ranks is steady
        where each rank's own value, near the bar, comes and goes."""
        bar = self.s.straggler_factor - 1
        hot: dict[int, float] = {}
        lines = set()
        n = len(values)
        eased = middle * (1 + STAYS_HOT * bar)
        over = [r for r, v in enumerate(values) if v >= eased]  # only their lines can be hot
        keys = {("column", grid.column_of[r]) for r in over}
        if grid.parallel:
            keys |= {("row", grid.row_of[r]) for r in over}
        for key in sorted(keys):
            ranks = grid.lines[key]
            mine = [r for r in ranks if r < n and values[r] == values[r]]  # not NaN
            if len(mine) < 2:
                continue
            least = middle * (1 + (STAYS_HOT if key in self._lines else 1.0) * bar)
            # The lower median is over the bar when this many of the values are.
            if sum(values[r] >= least for r in mine) >= len(mine) - (len(mine) - 1) // 2:
                lines.add(key)
                hot.update((r, values[r]) for r in mine)
        self._lines = lines
        return hot

    def _none(self, now: float, unseen: Container[object] = ()) -> list[Anomaly]:
        self._hot, self._lines, self._last = set(), set(), {}
        self.wander.clear(now)
        return self._judged(now, {}, unseen)

    def _conditions(self, frame: Frame, shape: Shape, grid: Grid, hot: dict[int, float],
                    name: str, middle: float, spread: float, ledger: Ledger | None,
                    medians: Medians) -> dict[object, tuple[str, float]]:
        """Each condition's text and impact: one per hot rank, or one for a row or column."""
        now = frame.time

        def text(rank: int, key: object, what: str, meaning: str) -> tuple[str, float]:
            value = hot[rank]
            held = now - self.hold.began.get(key, now)
            same = f"steady {held:.0f} s" if held >= 1 else "new"
            meaning = f" ({meaning})" if meaning else ""
            distance = (value - middle) / spread if spread > 0 else float("inf")
            found = causes(frame, rank, ledger.of(rank) if ledger else (), medians)
            line = (f"{name} {value / middle:.2f}x the median (+{value / middle - 1:.0%}), "
                    f"{_spread_words(distance, self.s.straggler_mads)} · {what}{meaning}, {same} · "
                    f"{said(found, grid.named([rank]))}")
            self._details[key] = (
                f"{name} of rank {rank} {value:.3g} against the median {middle:.3g}: "
                f"{_mads(distance)} above it (median absolute deviations, scaled to a "
                f"standard deviation; the bar is {self.s.straggler_mads:g})")
            return line, value / middle - 1

        what, meaning = shape.says(grid)
        worst = max(shape.ranks, key=lambda r: hot[r])
        if shape.kind in ("row", "column"):
            return {shape.anchor: text(worst, shape.anchor, f"{what}, worst {worst}", meaning)}
        if len(shape.ranks) > MANY_SCATTERED:  # one line, not a panel full of them
            places = len({grid.column_of[r] for r in shape.ranks})
            hint = "" if grid.parallel else "a stage or a replica? [layout] parallelism tells"
            slow = f"{len(shape.ranks)} slow {grid.device(shape.ranks)}s"
            return {None: text(worst, None, f"{slow} in {places} {grid.column_name}s, worst "
                                            f"{worst}", hint)}
        return {rank: text(rank, rank, what, meaning) for rank in shape.ranks}

    def _wandering(self, hot: dict[int, float], name: str, middle: float) -> tuple[str, float]:
        moved = len(self.wander.passing())
        worst = max(hot.values(), default=middle) / middle - 1
        return (f"the slowest rank moves: {moved} different ranks {name} ≥ "
                f"{self.s.straggler_factor - 1:.0%} over the median in the last "
                f"{MOVING_SECONDS:.0f} s (now up to +{worst:.0%}) · scattered and moving: "
                "data or sequence-length imbalance", worst)

    def _judged(self, now: float, conditions: dict[object, tuple[str, float]],
                unseen: Container[object] = ()) -> list[Anomaly]:
        """Held conditions as anomalies, each as severe as the highest impact it reached. A
        condition that lapses for a poll or two (a value dipping under the bar in noise)
        goes on as it was: a straggler's verdict does not end and start over."""
        missed = {}
        for key, last in self._last.items():
            steady = now - self.hold.began.get(key, now) >= STEADY_SECONDS
            if key not in conditions and steady and self._missed.get(key, 0) < LAPSE_POLLS:
                conditions[key] = last
                missed[key] = self._missed.get(key, 0) + 1
        self._last, self._missed = dict(conditions), missed
        found = self.hold.update(now, {key: line for key, (line, _) in conditions.items()},
                                 figures={key: f"{1 + impact:.2f}x"
                                          for key, (_, impact) in conditions.items()},
                                 details={key: self._details.get(key, "")
                                          for key in conditions}, unseen=unseen)
        held = {_key(a): self._peak.get(_key(a), 0.0) for a in found
                if a.unseen_since is not None}  # a condition held while its data is missing
        self._peak = {**held, **{key: max(impact, self._peak.get(key, 0.0))
                                 for key, (_, impact) in conditions.items()}}
        self._details = {key: self._details[key] for key in conditions
                         if key in self._details}
        critical = self.s.straggler_critical_factor - 1
        return [replace(a, severity="critical") if self._peak[_key(a)] >= critical else a
                for a in found]


def _key(anomaly: Anomaly) -> object:
    return anomaly.rank


def _measure(frame: Frame, idle_pct: float, summaries: FrameSummaries
             ) -> tuple[str, str, list[float] | None]:
    """Compute time where exported, else SM activity (unless the job idles): its name on
    screen, the metric and its values."""
    compute = frame.values.get("compute_time")
    if compute is not None:
        return "compute", "compute_time", list(compute)
    sm = frame.values.get("sm_active")
    if sm is None or summaries.median("sm_active") < idle_pct:
        return "SM activity", "sm_active", None
    return "SM activity", "sm_active", list(sm)


def _spread_words(distance: float, bar: float) -> str:
    """How far past the ranks' usual spread a value lies, in words (the figure, in median
    absolute deviations, is in the detail view); ``bar``: the deviations a straggler needs."""
    if distance >= FAR_OUTSIDE * bar:
        return "far outside the spread"
    return "outside the spread" if distance >= bar else "at the edge of the spread"


def _mads(distance: float) -> str:
    return "very many" if distance > 999 else f"{distance:.0f}"
