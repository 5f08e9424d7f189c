"""What the engine hands the UI after each poll: plain frozen values with version numbers.

The UI tells a new analysis, or a new rank map, by its version, never by which object it
is: values that crossed a process boundary are new objects every time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..core.analysis import Analysis
from ..core.history import HISTORY_METRICS, HistoryView, Point
from ..core.moment import JobEnd


@dataclass(frozen=True)
class Snapshot:
    """One poll's analysis. ``version`` grows by one per analysis; ``rank_map_version``
    grows when the engine learned a different rank map (the first map is version 0)."""

    version: int
    analysis: Analysis
    rank_map_version: int
    retry_after: float = 0.0  # seconds the source asked to be left alone (0: none)
    error: str = ""  # why this poll failed ("" when it did not): the analysis is the last one
    at: float | None = None  # the past moment replayed (epoch seconds); None: a live poll
    ended: JobEnd | None = None  # the job's series ended: no rank answers the live poll


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
