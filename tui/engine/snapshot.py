"""What the engine hands the UI after each poll: plain frozen values with version numbers.

The UI tells a new analysis, or a new rank map, by its version, never by which object it
is: values that crossed a process boundary are new objects every time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..core.analysis import Analysis
from ..core.history import HISTORY_METRICS, HistoryView, Point
from ..core.maps.levels import PlannedMap
from ..core.model import RankMap
from ..core.moment import JobEnd


@dataclass(frozen=True)
class Snapshot:
    """One analysis: a live poll's, a past moment's (``at``) or a bundle's. ``version`` grows
    by one per live analysis; ``rank_map_version`` changes when the rank map does (the
    first map is version 0): the rank map of a past moment has the number of an equal map
    handed out before, else a new one."""

    version: int
    analysis: Analysis
    rank_map_version: int
    retry_after: float = 0.0  # seconds the source asked to be left alone (0: none)
    error: str = ""  # why this poll failed ("" when it did not): the analysis is the last one
    at: float | None = None  # the past moment replayed (epoch seconds); None: a live poll
    ended: JobEnd | None = None  # the job's series ended: no rank answers the live poll
    levels: Mapping[str, PlannedMap] = field(default_factory=dict)
    """The cluster maps' levels for this analysis, planned by the engine, by map id."""


@dataclass(frozen=True)
class RankHistory:
    """One rank's share of the history, asked for by the rank screen: what an engine in
    another process sends instead of the whole job's history. It answers ``series`` as the
    core's ``HistoryView`` does, for its one rank."""

    rank: int
    points: Mapping[str, tuple[Point, ...]]

    @classmethod
    def of(cls, history: HistoryView | None, rank: int) -> RankHistory:
        found = {} if history is None else {
            metric: tuple(history.series(metric, rank)) for metric in HISTORY_METRICS}
        return cls(rank, found)

    def series(self, metric: str, rank: int, since: float | None = None) -> list[Point]:
        if rank != self.rank:
            return []
        return [p for p in self.points.get(metric, ()) if since is None or p.time >= since]


class RankMapVersions:
    """Numbers the rank maps an engine hands out, live or past: a map equal to one handed
    out lately keeps its number, so the UI lays its maps out anew only for another map."""

    KEPT = 4  # the live map, the one before, and a past moment's or two

    def __init__(self, first: RankMap) -> None:
        self._known: list[tuple[RankMap, int]] = [(first, 0)]
        self._next = 1

    def version_of(self, rank_map: RankMap) -> int:
        for known, version in self._known:  # the same object: no comparing 16,384 ranks
            if known is rank_map:
                return version
        for known, version in self._known:
            if known == rank_map:
                return version
        version, self._next = self._next, self._next + 1
        self._known = [(rank_map, version), *self._known][:self.KEPT]
        return version
