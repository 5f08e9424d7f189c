"""Map planning: each cluster map's levels for an analysis, worked out in the engine.

A poll of 16,384 ranks means quantising 16,384 values per map and finding the cells that
changed: per-rank work that must not hold the UI thread. The screen describes each of its
maps as a plain frozen value (``MapGeometry``: which metric it shows and what it draws now,
as ``heatmap.view()`` gives it); the engine plans levels for it and never reads a widget.
A plan that no longer matches the map when it arrives is planned again by the widget
(``MapLevels.based_on``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.analysis import Analysis
from ..core.maps.levels import MapLevels, MapView, plan


@dataclass(frozen=True)
class MapGeometry:
    """One map as the screen shows it when the levels are asked for."""

    map_id: str  # the screen's name for the map; the plan comes back under it
    metric_id: str  # the metric it shows now
    view: MapView


def plan_maps(analysis: Analysis, maps: Sequence[MapGeometry]) -> Mapping[str, MapLevels]:
    """The levels of every map whose metric ``analysis`` has values for, by ``map_id``."""
    frame = analysis.frame
    if frame is None:
        return {}
    planned = {}
    for geometry in maps:
        values = frame.values.get(geometry.metric_id)
        if values is None:
            continue
        low, high = analysis.scales.get(geometry.metric_id) or (0.0, 1.0)
        planned[geometry.map_id] = plan(geometry.view, values, low, high, frame.stale,
                                           frame.unknown)
    return planned
