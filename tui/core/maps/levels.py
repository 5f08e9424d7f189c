"""One frame of a heatmap's levels, worked out away from the UI thread.

A poll of 16,384 ranks means quantising 16,384 values per map, taking each node's worst
level when a cell stands for whole nodes, and finding which cells changed: per-rank Python
work that would hold the UI thread for tens of milliseconds. ``plan`` does it all from a
snapshot of what the map shows now (in the poll worker's thread); the widget then only
takes the result and repaints the rows it names, provided nothing moved meanwhile (a
resize, a zoom, another metric, another frame drawn first): ``MapLevels.based_on`` says.

Pure: no Textual, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from . import scale
from .layout import GridLayout


@dataclass(frozen=True)
class MapView:
    """What a map shows, as the levels are planned against it: read on any thread, as the
    widget replaces these objects rather than changing them."""

    bad: str
    rank_levels: list[int]  # the levels drawn now, per rank (hysteresis starts from them)
    cell_levels: list[int]  # ... per cell
    grid: GridLayout | None
    ranks_per_cell: int  # > 1 when a cell stands for whole nodes
    window_start: int  # the first position shown (zoomed), else 0
    order: tuple[int, ...] | None = None  # the rank at each position; None: rank order


@dataclass(frozen=True)
class MapShape:
    """A map's cells as plain values, without its levels: what the engine plans levels for.
    It crosses to an engine apart only when it changes (a resize, a zoom, another layout)."""

    bad: str
    n_ranks: int
    grid: GridLayout | None
    ranks_per_cell: int
    window_start: int
    order: tuple[int, ...] | None = None


@dataclass(frozen=True)
class PlannedMap:
    """A map's levels planned by the engine from the levels it planned the time before
    (``base``, its ``serial``): the rows named are all that changed only for a map that drew
    that plan; any other map draws every row. Levels are one byte each."""

    metric_id: str
    shape: MapShape
    serial: int
    base: int  # the serial of the plan these were worked out from; NO_BASE: none
    rank_levels: bytes
    cell_levels: bytes
    rows: frozenset[int]


NO_BASE = -1  # a plan worked out from no levels the map is known to show


@dataclass(frozen=True)
class MapLevels:
    """The levels of one frame, and the text rows they change."""

    view: MapView  # what they were planned against
    rank_levels: list[int]
    cell_levels: list[int]
    rows: frozenset[int]  # text rows of the grid whose cells changed level

    def based_on(self, view: MapView) -> bool:
        """Whether the map still shows what these levels were planned against."""
        planned = self.view
        return (planned.rank_levels is view.rank_levels
                and planned.cell_levels is view.cell_levels and planned.grid is view.grid
                and planned.bad == view.bad and planned.ranks_per_cell == view.ranks_per_cell
                and planned.window_start == view.window_start and planned.order is view.order)


def plan(view: MapView, values: Sequence[float], low: float, high: float,
         stale: Collection[int] = (), unknown: Collection[int] = ()) -> MapLevels:
    """The levels of ``values`` (NaN: no data) on a ``low``..``high`` scale; ``stale`` ranks
    drawn as stale whatever their value, and so are the ``unknown`` ones (a partial answer
    left them out: not known, which "no data" would not say)."""
    n_ranks = len(view.rank_levels)
    values = list(values[:n_ranks])
    values += [float("nan")] * (n_ranks - len(values))
    ranks = scale.quantise_all(values, low, high, view.bad, view.rank_levels)
    for rank in stale:
        if 0 <= rank < n_ranks and ranks[rank] != scale.MISSING:
            ranks[rank] = scale.STALE
    for rank in unknown:
        if 0 <= rank < n_ranks:
            ranks[rank] = scale.STALE
    count = 0 if view.grid is None else view.grid.visible_items
    cells = cell_levels(ranks, view.ranks_per_cell, view.window_start, count, view.order)
    old = view.cell_levels
    changed = [i for i, level in enumerate(cells) if i >= len(old) or old[i] != level]
    return MapLevels(view, ranks, cells, rows_of(view.grid, changed))


def cell_levels(ranks: list[int], ranks_per_cell: int, start: int, count: int,
                order: Sequence[int] | None = None) -> list[int]:
    """The level of each of ``count`` cells from position ``start``: its rank's, or the
    worst of its ranks' when it stands for several (levels are ordered healthy to bad, then
    stale, then missing). ``order``: the rank at each position (None: rank order)."""
    if order is not None:
        ranks = [ranks[rank] for rank in order]
    if ranks_per_cell == 1:
        return ranks[start:start + count]
    return [max(ranks[i:i + ranks_per_cell])
            for i in range(0, min(len(ranks), count * ranks_per_cell), ranks_per_cell)]


def rows_of(grid: GridLayout | None, cells: Sequence[int]) -> frozenset[int]:
    """The text rows holding ``cells`` (those drawn)."""
    if grid is None:
        return frozenset()
    shown = grid.visible_items
    return frozenset(grid.position(i)[1] for i in cells if 0 <= i < shown)
