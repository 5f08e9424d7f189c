"""Map planning: each cluster map's levels, worked out in the engine, which keeps them.

A poll of 16,384 ranks means quantising 16,384 values per map and finding the cells that
changed: per-rank work that must not hold the UI thread. The screen describes each map as a
plain frozen value (``MapGeometry``: which metric it shows, and its cells' shape), and only
when it changes; the engine keeps, per map, the levels it planned last (``MapBoard``) and
plans the next ones from them. So a poll is one request, whose snapshot carries its maps'
levels, and a past moment's or a bundle's likewise.

The rows a plan names as changed are only worth anything to a map that drew the plan
before it (``PlannedMap.base``): any other (paused meanwhile, planned by itself, just laid
out) draws every row. A plan for cells the map no longer has is planned by the widget."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.analysis import Analysis
from ..core.maps.levels import NO_BASE, MapShape, MapView, PlannedMap, plan
from ..core.maps.scale import MISSING


@dataclass(frozen=True)
class MapGeometry:
    """One map as the screen lays it out."""

    map_id: str  # the screen's name for the map; its levels come back under it
    metric_id: str  # the metric it shows now
    shape: MapShape


@dataclass
class _Held:
    """What the engine planned last for one map."""

    geometry: MapGeometry
    rank_levels: list[int]
    cell_levels: list[int]
    serial: int = NO_BASE


class MapBoard:
    """The maps the screen shows, and the levels planned for each last, by map id. Polls and
    past moments plan in threads of their own: one at a time."""

    def __init__(self) -> None:
        self._held: dict[str, _Held] = {}
        self._serial = 0
        self._lock = threading.Lock()

    def reshape(self, maps: Sequence[MapGeometry] | None) -> None:
        """The maps as the screen now lays them out (None: as they were). A map whose metric
        or rank count is unchanged keeps its ranks' levels (hysteresis goes on from them)."""
        if maps is None:
            return
        with self._lock:
            held = {}
            for geometry in maps:
                was = self._held.get(geometry.map_id)
                if was is not None and was.geometry == geometry:
                    held[geometry.map_id] = was
                    continue
                ranks = [MISSING] * geometry.shape.n_ranks
                if (was is not None and was.geometry.metric_id == geometry.metric_id
                        and len(was.rank_levels) == geometry.shape.n_ranks):
                    ranks = was.rank_levels
                held[geometry.map_id] = _Held(geometry, ranks, [])
            self._held = held

    def plan(self, analysis: Analysis) -> dict[str, PlannedMap]:
        """The levels of every map whose metric ``analysis`` has values for, by map id."""
        frame = analysis.frame
        if frame is None:
            return {}
        planned = {}
        with self._lock:
            for map_id, held in self._held.items():
                values = frame.values.get(held.geometry.metric_id)
                if values is not None:
                    planned[map_id] = self._plan_one(held, analysis, values)
        return planned

    def _plan_one(self, held: _Held, analysis: Analysis,
                  values: Sequence[float]) -> PlannedMap:
        frame = analysis.frame
        assert frame is not None
        shape, metric_id = held.geometry.shape, held.geometry.metric_id
        view = MapView(shape.bad, held.rank_levels, held.cell_levels, shape.grid,
                       shape.ranks_per_cell, shape.window_start, shape.order)
        low, high = analysis.scales.get(metric_id) or (0.0, 1.0)
        levels = plan(view, values, low, high, frame.stale, frame.unknown)
        self._serial += 1
        base, held.serial = held.serial, self._serial
        held.rank_levels, held.cell_levels = levels.rank_levels, levels.cell_levels
        return PlannedMap(metric_id, shape, held.serial, base, bytes(levels.rank_levels),
                          bytes(levels.cell_levels), levels.rows)


def planned_safely(board: MapBoard, analysis: Analysis) -> Mapping[str, PlannedMap]:
    """``board.plan``, or none (the widgets then plan their own): a poll must not stop here."""
    try:
        return board.plan(analysis)
    except Exception:
        return {}
