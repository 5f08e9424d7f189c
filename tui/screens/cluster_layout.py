"""How the cluster screen lays its maps out: by node or by the job's parallelism, one map
full size or all four, a node zoomed, maps of metrics never exported folded away, and the
fourth map's step time or compute time."""

from __future__ import annotations

from textual.reactive import var
from textual.widgets import Static

from ...widgets.panel import MetricPanel
from ..core.analysis import Analysis
from ..core.maps.layout import Arrangement
from ..core.maps.levels import PlannedMap
from ..core.parallelism import Parallelism, for_job
from . import cluster_lines
from .cluster_state import ClusterState
from .hints import key_for


class MapLayout(ClusterState):
    """What the cluster screen (``cluster.ClusterScreen``) does to lay its maps out."""

    solo: var[int | None] = var(None, init=False)
    """The one map shown full size (its index), or None for all four."""
    map_metrics: list[str]
    layout_view: str  # "node" or "parallelism"
    _folded: frozenset[int] = frozenset()  # maps of GPU metrics never exported

    def _draw_panel(self, panel: MetricPanel, analysis: Analysis,
                    planned: PlannedMap | None = None) -> None:
        raise NotImplementedError

    def action_zoom(self) -> None:
        lead = self._lead_heatmap()
        zoomed = lead.zoom_node is not None
        if not zoomed and lead.mode == "rank":
            self.app.notify("Nothing to zoom: every rank already has a cell of its own. "
                            f"{key_for(self, 'map.zoom')} zooms when the maps show a cell "
                            "per node.", timeout=5)
            return
        node = None if zoomed else lead.column_of(self.cursor)
        for panel in self.panels:
            panel.heatmap.zoom(node)
            if self.frame is not None:
                self._draw_panel(panel, self.analysis)

    def _arrangement(self) -> tuple[Arrangement | None, str]:
        """The maps' arrangement in the current layout view, and why it is by node when the
        parallelism view cannot be had ("" when nothing stands in the way)."""
        parallelism = self.settings.layout.parallelism
        if self.layout_view != "parallelism" or not self.rank_map.ranks:
            return None, ""
        if parallelism is None:
            return None, ('No parallelism given: set [layout] parallelism, e.g. '
                          '"tp=8,pp=4,dp=16", to lay the maps out by stage and replica.')
        fitted, why = for_job(parallelism, len(self.rank_map))
        return (arrangement_of(fitted), "") if fitted else (None, why)

    def _layout_refused(self) -> None:
        """Say why the maps are by node when the config asked for the parallelism view."""
        why = self._arrangement()[1]
        if why:
            self.layout_view = "node"
            self.app.notify(why, timeout=8, markup=False)

    def action_switch_layout(self) -> None:
        self.layout_view = "parallelism" if self.layout_view == "node" else "node"
        arrangement, why = self._arrangement()
        if why:
            self.layout_view = "node"
            self.app.notify(why, timeout=6, markup=False)
            return
        for panel in self.panels:
            panel.heatmap.arrange(arrangement)

    def action_solo(self, index: int) -> None:
        self.solo = index

    def action_all_maps(self) -> None:
        self.solo = None

    def watch_solo(self) -> None:
        self._lay_out_maps()

    def _fold_maps(self) -> None:
        """Fold the maps of GPU metrics never exported, unless no map would be left; lay
        the maps out anew only when that changes."""
        never = self.analysis.gpu.never
        folded = frozenset(index for index, metric_id in enumerate(self.map_metrics)
                           if metric_id in never)
        if len(folded) == len(self.map_metrics):
            folded = frozenset()
        if folded != self._folded:
            self._folded = folded
            self._lay_out_maps()

    def _shown(self) -> list[int]:
        """The maps on screen: the solo map, else every map not folded."""
        return [index for index in range(len(self.map_metrics))
                if index == self.solo or (self.solo is None and index not in self._folded)]

    def _lay_out_maps(self) -> None:
        """Show the maps that are shown, the grid sized to them, and say under them which
        maps are folded."""
        shown = self._shown()
        grid = self.query_one("#maps")
        for count in (1, 2, 3):
            grid.set_class(len(shown) == count, f"-maps-{count}")
        for index, panel in enumerate(self.panels):
            panel.display = index in shown
            panel.set_class(len(shown) == 3 and index == shown[-1], "-wide")
        titles = [self.settings.metrics[self.map_metrics[i]].title for i in sorted(self._folded)]
        note = self.query_one("#maps-folded", Static)
        note.update(cluster_lines.folded_note(titles, self.analysis.gpu.any_seen))
        note.set_class(bool(titles), "-shown")

    def action_flip_step(self) -> None:
        """Step time and compute time share the fourth map; a straggler shows in compute."""
        pair = ("step_time", self.settings.step_alternate)
        for index, metric_id in enumerate(self.map_metrics):
            if metric_id in pair:
                self.map_metrics[index] = pair[1] if metric_id == pair[0] else pair[0]
                if self.frame is not None:
                    self._draw_panel(self.query_one(f"#map-{index}", MetricPanel),
                                     self.analysis)


def arrangement_of(parallelism: Parallelism) -> Arrangement:
    """The maps' cells for ``parallelism``: a column per data-parallel replica, its pipeline
    stages top to bottom (labelled pp0, pp1, ...), each stage's tensor-parallel ranks
    together."""
    return Arrangement(tuple(parallelism.display_order()),
                       parallelism.stages * parallelism.group, parallelism.group,
                       tuple(f"pp{stage}" for stage in range(parallelism.stages)))
