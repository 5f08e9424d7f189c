"""A heatmap with its title, its summary line and its colour key, in one bordered box."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content

from ..tui.core.maps.levels import PlannedMap
from .heatmap import Heatmap
from .legend import Legend

MODE_NOTES = {
    "rank": "",
    "zoom": "zoomed",
    "node": "per node",
    "cut": "per node, cut",
}


class MetricPanel(Vertical):
    """Title in the top border; the legend line carries the scale and min / median / max."""

    def __init__(self, metric_id: str, title: str, bad: str, n_ranks: int, gpus_per_node: int,
                 *, id: str | None = None) -> None:
        super().__init__(id=id, classes="metric-panel")
        self.metric_id = metric_id
        self.title = title
        self._shown_title = title
        self.border_title = Content(title)  # plain text, never markup
        self.heatmap = Heatmap(n_ranks, gpus_per_node, bad)
        self.legend = Legend(bad)

    def compose(self) -> ComposeResult:
        yield self.heatmap
        yield self.legend

    def show(self, metric_id: str, title: str, bad: str, values: Sequence[float],
             scale: tuple[float, float] | None, summaries: Sequence[str],
             ends: tuple[str, str], stale: Collection[int] = (),
             planned: PlannedMap | None = None, unknown: Collection[int] = ()) -> None:
        """Draw one frame: ``values`` per rank on ``scale`` (None: nothing to scale against).

        ``summaries`` are the min / median / max line from longest to shortest form;
        ``planned``, the map's levels the engine planned from the same values (worked out
        here if missing, or planned for another metric or for cells the map no longer has).
        """
        if metric_id != self.metric_id:
            self.metric_id = metric_id
            self.heatmap.bad = self.legend.bad = bad
            self.heatmap.forget_levels()
            self.legend.refresh()
        self.title = title
        low, high = scale if scale is not None else (0.0, 1.0)
        if (planned is None or planned.metric_id != metric_id
                or not self.heatmap.show_planned(planned)):
            self.heatmap.update_values(values, low, high, stale, unknown)
        self.legend.set_stale_key(bool(stale) or bool(unknown),
                                  "not answered" if unknown and not stale else
                                  "stale / not answered" if unknown else "stale")
        self.legend.set_scale(*ends)
        self.legend.set_summary(*summaries)
        self._show_title()

    def on_heatmap_relaid(self, message: Heatmap.Relaid) -> None:
        self._show_title()

    def _show_title(self) -> None:
        # Setting a border title repaints the whole panel, so only a real change sets it.
        note = MODE_NOTES.get(self.heatmap.mode, "")
        unit = "node" if self.heatmap.arrangement is None else "group"
        if note.startswith("per node") and self.heatmap.nodes_per_cell > 1:
            note = note.replace("per node", f"per {self.heatmap.nodes_per_cell} {unit}s")
        note = note.replace("per node", f"per {unit}")
        if self.heatmap.arrangement is not None:  # the job's parallelism lays it out
            note = "stages × replicas" + (f", {note}" if note else "")
        title = f"{self.title} · {note}" if note else self.title
        if title != self._shown_title:
            self._shown_title = title
            self.border_title = Content(title)
