"""Whether the job's GPUs are seen at all: which ranks GPU data (DCGM, NVML) has named a GPU
for, and which GPU metrics have had no value for any rank since the analysis began.

A CPU job (gloo, no GPUs), or GPUs nobody exports, has the job's own per-rank series and no
GPU series: its ranks are then named by their local rank, not a GPU ("node-a local rank 1"),
and its GPU maps fold away. Both only ever move towards the GPU: a rank named once keeps its
GPU, a metric seen once is never folded again. A metric folds only after it has had no value
for ``FOLD_AFTER_SECONDS`` of polls, so one empty first answer never folds a map.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from .model import Frame, RankMap, is_missing

FOLD_AFTER_SECONDS = 10.0  # a GPU metric without a value for this long since the first poll


@dataclass(frozen=True)
class GpuCoverage:
    """What the GPU data of the job covers, as of one poll."""

    any_seen: bool = True  # some GPU metric has had a value for some rank
    never: frozenset[str] = frozenset()  # GPU metrics with no value yet, past the hold


class GpuData:
    """Follows, poll by poll, which ranks and which GPU metrics GPU data has covered."""

    def __init__(self, gpu_metrics: Iterable[str]) -> None:
        self.gpu_metrics = frozenset(gpu_metrics)
        self.metrics: set[str] = set()  # GPU metrics that have had a value
        self.ranks: set[int] = set()  # ranks some GPU metric has had a value for
        self._unnamed: list[int] = []  # the ranks below ``_size`` not in ``ranks``
        self._size = 0
        self._first: float | None = None  # the first poll's time
        self._marked: tuple[RankMap, int, RankMap] | None = None  # (given, named, marked)

    def see(self, frame: Frame, n_ranks: int) -> GpuCoverage:
        """Take in one poll of a job of ``n_ranks`` ranks; what GPU data covers so far."""
        if self._first is None:
            self._first = frame.time
        if n_ranks > self._size:
            self._unnamed += range(self._size, n_ranks)
            self._size = n_ranks
        for metric_id in self.gpu_metrics & frame.values.keys():
            series = frame.values[metric_id]
            if metric_id not in self.metrics and any(not is_missing(v) for v in series):
                self.metrics.add(metric_id)
            if self._unnamed:
                self._name(series)
        return self.coverage(frame.time)

    def coverage(self, now: float) -> GpuCoverage:
        """What GPU data covers at ``now``: a metric counts as never seen once the hold since
        the first poll has passed."""
        held = self._first is not None and now - self._first >= FOLD_AFTER_SECONDS
        never = frozenset(self.gpu_metrics - self.metrics) if held else frozenset()
        return GpuCoverage(bool(self.metrics), never)

    def _name(self, series: Sequence[float]) -> None:
        size = len(series)
        named = {r for r in self._unnamed if r < size and not is_missing(series[r])}
        if named:
            self.ranks |= named
            self._unnamed = [r for r in self._unnamed if r not in named]

    def marked(self, rank_map: RankMap) -> RankMap:
        """``rank_map`` with each rank's GPU named where GPU data named it, else by its local
        rank; the same object as long as neither it nor the ranks named change."""
        if self._marked is not None:
            given, named, marked = self._marked
            if given is rank_map and named == len(self.ranks):
                return marked
        ranks = tuple(rank if rank.gpu_named == (rank.rank in self.ranks)
                      else replace(rank, gpu_named=rank.rank in self.ranks)
                      for rank in rank_map.ranks)
        changed = any(new is not old for new, old in zip(ranks, rank_map.ranks, strict=True))
        marked = replace(rank_map, ranks=ranks) if changed else rank_map
        self._marked = (rank_map, len(self.ranks), marked)
        return marked
