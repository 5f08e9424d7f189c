"""What the hot cells of a map form, and whether they stay put.

The shapes the "What-if analysis" straggler study names, on a map laid out with pipeline
stages as rows and data-parallel replicas as columns: one hot cell is one bad worker; one hot
row an imbalanced pipeline stage; one hot column a replica (often one node or one link); hot
cells scattered and moving between windows, data or sequence-length imbalance. Without the
job's parallelism the map's columns are nodes, and a hot column is one node.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from dataclasses import dataclass

from ..model import RankMap
from ..parallelism import Parallelism

MOVING_SECONDS = 30.0  # how far back "moving between windows" looks
MOVING_RANKS = 3  # this many different passing hot ranks in that time: the hot spot wanders
STEADY_POLLS = 3  # hot in each of this many polls in a row: a hot spot that stays
BUSY_POLLS, BUSY_OF = 3, 5  # a wander has a passing hot rank in 3 of the latest 5 polls


@dataclass(frozen=True)
class Shape:
    """What a set of hot ranks forms: ``kind`` is "cell", "row", "column" or "scattered"."""

    kind: str
    ranks: tuple[int, ...]  # the hot ranks, lowest first
    index: int = -1  # the row (stage) or column (replica, node) they lie in
    anchor: int = -1  # the rank the anomaly is placed on: the first rank of the row or column

    def says(self, grid: Grid) -> tuple[str, str]:
        """What the ranks are and what that shape usually means: ("one GPU", "a bad
        worker"), ("stage 3 of 4: 128 ranks", "an imbalanced pipeline stage"), ...; "rank"
        for "GPU" where no GPU data named their GPUs."""
        n = len(self.ranks)
        device = grid.device(self.ranks)
        if self.kind == "cell":
            return f"one {device}", "a bad worker"
        if self.kind == "row":
            return f"stage {self.index} of {grid.rows}: {n} ranks", "an imbalanced pipeline stage"
        if self.kind == "column":
            meaning = "often one node or link" if grid.parallel else "one node"
            return f"{grid.column_name} {self.index}: {n} ranks", meaning
        return f"one of {n} slow {device}s", ""


class Grid:
    """The rows and columns of the maps' layout: (stage, replica) with the job's parallelism,
    else (none, node)."""

    def __init__(self, rank_map: RankMap, parallelism: Parallelism | None = None) -> None:
        self.parallel = parallelism is not None
        n = len(rank_map)
        if parallelism is not None:
            self.row_of = [parallelism.stage(r) for r in range(n)]
            self.column_of = [parallelism.replica(r) for r in range(n)]
            self.rows, self.column_name = parallelism.stages, "replica"
        else:
            self.row_of = [0] * n
            self.column_of = [rank.node for rank in rank_map.ranks]
            self.rows, self.column_name = 1, "node"
        self.gpu_named = [rank.gpu_named for rank in rank_map.ranks]
        self._first: dict[tuple[str, int], int] = {}
        self.lines: dict[tuple[str, int], list[int]] = {}  # each row's and column's ranks
        for rank in range(n):
            for key in (("row", self.row_of[rank]), ("column", self.column_of[rank])):
                self._first.setdefault(key, rank)
                self.lines.setdefault(key, []).append(rank)
        if not self.parallel:  # without the job's parallelism the map has no rows
            self.lines = {k: v for k, v in self.lines.items() if k[0] == "column"}

    def named(self, ranks: Collection[int]) -> bool:
        """Whether GPU data named the GPU of each of ``ranks``."""
        return all(self.gpu_named[r] for r in ranks if r < len(self.gpu_named))

    def device(self, ranks: Collection[int]) -> str:
        """What ``ranks`` run on, as a text names them: "GPU" where GPU data named each
        one's GPU, else "rank" (a CPU job, GPUs nobody exports)."""
        return "GPU" if self.named(ranks) else "rank"

    def shapes(self, hot: Collection[int]) -> list[Shape]:
        """What ``hot`` forms: each row (with the job's parallelism) and each column at least
        half hot, then the hot ranks left as one cell or several scattered ones. A few hot
        ranks elsewhere (noise, a second fault) do not hide a hot row or column."""
        found: list[Shape] = []
        left = set(hot)
        lines = ("row", "column") if self.parallel else ("column",)
        for line in lines:
            index_of = self.row_of if line == "row" else self.column_of
            across = self.column_of if line == "row" else self.row_of
            members: dict[int, list[int]] = {}
            for rank in left:
                members.setdefault(index_of[rank], []).append(rank)
            for index, ranks in sorted(members.items()):
                spans = len({across[r] for r in ranks}) > 1 or not self.parallel
                if len(ranks) >= 2 and 2 * len(ranks) >= len(self.lines[(line, index)]) and spans:
                    found.append(Shape(line, tuple(sorted(ranks)), index,
                                       self._first[(line, index)]))
                    left -= set(ranks)
        rest = tuple(sorted(left))
        if len(rest) == 1:
            found.append(Shape("cell", rest, anchor=rest[0]))
        elif rest:
            found.append(Shape("scattered", rest))
        return found


class Wander:
    """Which hot ranks stay and which pass: a rank hot in each of the last STEADY_POLLS
    polls stays; passing hot ranks that keep changing are a wandering straggler."""

    def __init__(self) -> None:
        self._polls: deque[tuple[float, frozenset[int]]] = deque()

    def update(self, now: float, hot: Collection[int]) -> None:
        self._polls.append((now, frozenset(hot)))
        while self._polls and self._polls[0][0] < now - MOVING_SECONDS:
            self._polls.popleft()

    def clear(self, now: float) -> None:
        self.update(now, ())

    @property
    def steady(self) -> frozenset[int]:
        last = [hot for _, hot in list(self._polls)[-STEADY_POLLS:]]
        if len(last) < STEADY_POLLS:
            return frozenset()
        return frozenset.intersection(*last)

    def passing(self) -> set[int]:
        """The ranks that were hot in the window and went, never having stayed (one hot
        now may yet stay)."""
        seen: set[int] = set()
        for _, hot in self._polls:
            seen |= hot
        now = self._polls[-1][1] if self._polls else frozenset()
        return seen - self._stayed() - now

    def _stayed(self) -> set[int]:
        runs: dict[int, int] = {}
        stayed: set[int] = set()
        for _, hot in self._polls:
            runs = {rank: runs.get(rank, 0) + 1 for rank in hot}
            stayed |= {rank for rank, run in runs.items() if run >= STEADY_POLLS}
        return stayed

    @property
    def wandering(self) -> bool:
        """Hot ranks keep coming and going, one in most of the latest polls (a hiccup now
        and then is not a wander, and a wander ends soon after its last passing rank)."""
        stayed = self._stayed()
        busy = sum(1 for _, hot in list(self._polls)[-BUSY_OF:] if hot - stayed)
        return busy >= BUSY_POLLS and len(self.passing()) >= MOVING_RANKS
