"""The cluster screen: four per-rank heatmaps, the job header and the selected rank.

A map of a GPU metric that no GPU has exported since the job was first polled (a CPU job,
GPUs nobody exports) folds away, the other maps take its room, and one line under the maps
says what is not shown; it comes back with its first value."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.reactive import var
from textual.widgets import Static

from ...widgets.anomaly_list import AnomalyList
from ...widgets.heatmap import Heatmap
from ...widgets.key_footer import KeyFooter
from ...widgets.panel import MetricPanel
from ..core.advice.incidents import Incident
from ..core.analysis import Analysis
from ..core.config_values import MetricDef
from ..core.detect.detectors import Anomaly
from ..core.maps.levels import PlannedMap
from ..core.metrics import format_value
from ..core.model import Frame, Health, RankMap
from ..engine.maps import MapGeometry
from ..engine.snapshot import Snapshot
from ..settings.config import Settings
from . import cluster_lines
from .cluster_incidents import IncidentPanel
from .cluster_layout import MapLayout
from .evidence import EvidenceScreen
from .hints import key_for
from .jump import JumpScreen
from .line_styles import CLASSES, styles_of
from .too_small import TooSmall

MIN_SIZE = (60, 18)  # below it the maps, the anomalies and the status line do not all fit


class ClusterScreen(MapLayout, IncidentPanel):
    """Every rank at once."""

    BINDING_GROUP_TITLE = "Cluster"
    COMPONENT_CLASSES = CLASSES  # the styles of the header and the status line
    BINDINGS = [
        Binding("up,k", "move(0,-1)", "Up", show=False, id="cursor.up",
                tooltip="Move the cursor up (previous GPU of the node)"),
        Binding("down,j", "move(0,1)", "Down", show=False, id="cursor.down",
                tooltip="Move the cursor down (next GPU of the node)"),
        Binding("left,h", "move(-1,0)", "Left", show=False, id="cursor.left",
                tooltip="Move the cursor to the previous node"),
        Binding("right,l", "move(1,0)", "Right", show=False, id="cursor.right",
                tooltip="Move the cursor to the next node"),
        Binding("home,g", "select(0)", "First rank", show=False, id="cursor.first",
                tooltip="Move the cursor to the first rank"),
        Binding("end,G", "select(-1)", "Last rank", show=False, id="cursor.last",
                tooltip="Move the cursor to the last rank"),
        Binding("1", "solo(0)", "Map", key_display="1-4", id="map.1",
                tooltip="Show map 1 full size (2, 3, 4: the others)"),
        Binding("2", "solo(1)", "Map 2", show=False, id="map.2",
                tooltip="Show map 2 full size"),
        Binding("3", "solo(2)", "Map 3", show=False, id="map.3",
                tooltip="Show map 3 full size"),
        Binding("4", "solo(3)", "Map 4", show=False, id="map.4",
                tooltip="Show map 4 full size"),
        Binding("0", "all_maps", "All", id="map.all",
                tooltip="Show all four maps"),
        Binding("c", "flip_step", "Compute", id="map.compute",
                tooltip="Flip the step-time map to compute time and back (stragglers show there)"),
        Binding("z", "zoom", "Zoom", id="map.zoom",
                tooltip="Zoom into the selected node's neighbours, rank by rank; again: out"),
        Binding("t", "switch_layout", "Layout", show=False, id="map.layout",
                tooltip="Lay the maps out by node, or by the job's parallelism: pipeline "
                        "stages as rows, data-parallel replicas as columns"),
        Binding("slash", "jump", "Search", key_display="/", id="cursor.jump",
                tooltip="Search the ranks (a rank number, host name, host:gpu or node, "
                        "n37) and move the cursor there"),
        Binding("enter", "open_rank", "Rank", id="cursor.open",
                tooltip="Open the selected rank: its values, log tail and alerts"),
        Binding("e", "evidence", "Evidence", show=False, id="hang.evidence",
                tooltip="The log lines behind the hang triage"),
        Binding("n", "next_anomaly(1)", "Anomaly", id="anomaly.next",
                tooltip="Move the cursor to the next row's rank (most severe first)"),
        Binding("N", "next_anomaly(-1)", "Previous anomaly", show=False, id="anomaly.previous",
                tooltip="Move the cursor to the previous row's rank"),
        Binding("i", "incident_detail", "Detail", id="anomaly.detail",
                tooltip="The selected anomaly's whole text, its evidence, and what is "
                        "folded under it and why"),
        Binding("s", "since", "Since", show=False, id="anomaly.since",
                tooltip="Show the job as it was when the selected anomaly began"),
        Binding("x", "dismiss_restart", "Dismiss", show=False, id="anomaly.dismiss",
                tooltip="Take the selected restart off the panel (it stays in the goodput "
                        "and in `ranktop report`)"),
        Binding("p", "pause", "Pause", id="app.pause",
                tooltip="Freeze the screen (polling goes on); again to resume"),
        # Named in the anomalies' title: the footer is full at 120 columns.
        Binding("a", "advice", "Advice", show=False, id="advice.open",
                tooltip="What to do about the incidents (drain, reset, watch, restart), with "
                        "the commands to copy: ranktop runs none of them"),
        Binding("q", "app.quit", "Quit", id="cluster.quit",
                tooltip="Quit ranktop (on the other screens, its key goes back)"),
    ]

    # UI state. Plain vars: each watcher repaints exactly what the change touches, where a
    # repainting reactive would redraw the whole screen.
    paused = var(False, init=False, toggle_class="-paused")
    """The screen is frozen; polls wait in ``pending``."""

    def __init__(self, settings: Settings, first: Snapshot, job_name: str) -> None:
        super().__init__()
        self.settings = settings
        self.shown = first
        """The snapshot drawn: a live poll's, a past moment's or a bundle's (its ``at``)."""
        self.rank_map = first.analysis.rank_map
        self.rank_map_version = first.rank_map_version  # of the rank map the maps lay out
        self.job_name = job_name
        self.status = first.analysis.status
        self.map_metrics = list(settings.maps)
        self.pending: Snapshot | None = None  # the newest live poll, held while paused
        self.anomalies: tuple[Anomaly, ...] = ()
        self.incidents: tuple[Incident, ...] = ()  # the panel's rows: one per root
        self.current_incident: int | None = None
        self.dismissed: set[tuple[float, int]] = set()  # restarts taken off the panel
        self._status_lines = 0
        self.layout_view = settings.layout.view  # "node" or "parallelism"
        self._maps: tuple[MetricPanel, ...] = ()  # the four map panels, as composed
        self._folded: frozenset[int] = frozenset()  # maps of GPU metrics never exported
        self.polling_since: float | None = None  # when the poll in flight began (the app sets it)
        self.replaying: float | None = None  # a moment being replayed, not shown yet
        self.started = 0.0  # when the screen was first shown: the wait for an answer began
        self.answered = False  # the live job's source has answered (or failed to) once

    def compose(self) -> ComposeResult:
        yield Static(id="header", markup=False)
        arrangement = self._arrangement()[0]
        self._maps = tuple(
            MetricPanel(metric_id, self.settings.metrics[metric_id].title,
                        self.settings.metrics[metric_id].bad, len(self.rank_map),
                        self.rank_map.gpus_per_node, id=f"map-{index}")
            for index, metric_id in enumerate(self.map_metrics))
        for panel in self._maps:
            panel.heatmap.arrange(arrangement)
        with Grid(id="maps"):
            yield from self._maps
        yield Static(id="maps-folded", markup=False)
        yield AnomalyList(id="anomalies")
        yield Static(id="rank-status", markup=False)
        yield TooSmall("cluster screen", MIN_SIZE)
        yield KeyFooter(first=("help", "app.quit"))

    def on_mount(self) -> None:
        self._layout_refused()
        self.set_interval(1.0, self._tick)
        self.query_one(TooSmall).check(self, self.app.size)
        self.started, self.answered = self.app.clock(), self.frame is not None
        self._refresh_header()
        self._draw_anomalies()
        self._refresh_rank_status()

    def on_resize(self, event: events.Resize) -> None:
        self.query_one(TooSmall).check(self, event.size)
        self.call_after_refresh(self._refresh_rank_status)

    # -- data --------------------------------------------------------------------------

    async def use_rank_map(self, rank_map: RankMap, version: int) -> None:
        """Lay the maps out anew for ``rank_map`` (the engine's ``version`` of it)."""
        self.rank_map, self.rank_map_version = rank_map, version
        # The maps are about to be built anew: set the cursor quietly, then show it on them.
        self.set_reactive(ClusterScreen.cursor, self.validate_cursor(self.cursor))
        await self.recompose()
        self._layout_refused()
        self.watch_solo()
        self.watch_cursor()
        self._draw_anomalies()  # the panel was built anew: what it said, it says again

    @property
    def analysis(self) -> Analysis:
        return self.shown.analysis

    @property
    def moment(self) -> float | None:
        """The past moment shown (a bundle's own among them); None: the live job."""
        return self.shown.at

    @property
    def frame(self) -> Frame | None:
        return self.analysis.frame

    @property
    def waiting_since(self) -> float | None:
        """Since when the live job's first answer is awaited; None once it came, and while
        a past moment is shown."""
        return None if self.answered or self.moment is not None else self.started

    def map_geometry(self) -> tuple[MapGeometry, ...]:
        """Each map as it stands, as plain values: the engine plans its levels from them."""
        return tuple(MapGeometry(panel.id, self.map_metrics[index], panel.heatmap.shape())
                     for index, panel in enumerate(self._maps))

    def show(self, snapshot: Snapshot, asked: bool = False) -> None:
        """Draw ``snapshot`` at once; a live poll while paused waits in ``pending`` (its
        status is said), unless ``asked`` (a moment, the way back to live, a bundle) or the
        live job's first answer. Its rank map is the one laid out (``use_rank_map``)."""
        live = snapshot.at is None and snapshot.version > 0
        first = live and not self.answered
        self.answered = self.answered or live
        self.status = snapshot.analysis.status
        self.set_class(self.status.health is Health.STALE, "-stale")
        if self.paused and not (asked or first):
            self.pending = snapshot
            self._refresh_header()
            return
        self.shown, self.pending = snapshot, None
        self._draw(snapshot.analysis, snapshot.levels)

    def show_replaying(self, moment: float | None) -> None:
        """Say in the header that ``moment`` is being replayed (None: no longer)."""
        self.replaying = moment
        self._refresh_header()

    def _draw(self, analysis: Analysis, planned: Mapping[str, PlannedMap]) -> None:
        self._show_anomalies(analysis)
        with self.app.batch_update():
            if analysis.frame is not None:
                for panel in self.panels:
                    self._draw_panel(panel, analysis, planned.get(panel.id))
            self._fold_maps()
            self._refresh_header()
            self._refresh_rank_status()

    @property
    def panels(self) -> list[MetricPanel]:
        return list(self.query(MetricPanel))

    def _map_values(self, index: int, analysis: Analysis,
                    ) -> tuple[MetricDef, Sequence[float] | None]:
        """The metric map ``index`` shows, and its values in ``analysis`` (None: absent)."""
        metric = self.settings.metrics[self.map_metrics[index]]
        frame = analysis.frame
        return metric, frame.values.get(metric.id) if frame is not None else None

    def _draw_panel(self, panel: MetricPanel, analysis: Analysis,
                    planned: PlannedMap | None = None) -> None:
        index = int(panel.id.rsplit("-", 1)[1])
        metric, values = self._map_values(index, analysis)
        frame = analysis.frame
        shows = frame.shows.get(metric.id) if frame is not None else None
        title = f"{key_for(self, f'map.{index + 1}')} {metric.title}" + (
            f" ({shows})" if shows else "")
        if values is None:
            why = frame.absent.get(metric.id, "") if frame is not None else ""
            said = (f"not exported — {why}", "not exported — see `ranktop check-config`",
                    "not exported") if why else ("not exported",)
            panel.show(metric.id, title, metric.bad, (), None, said, ("", ""))
            return
        scale = analysis.scales.get(metric.id)
        ends = ("", "") if scale is None else tuple(format_value(metric, v) for v in scale)
        panel.show(metric.id, title, metric.bad, values, scale,
                   summary_texts(metric, analysis.summaries.get(metric.id)), ends, frame.stale,
                   planned, frame.unknown)

    def _tick(self) -> None:
        self._refresh_header()  # the header's clock
        if self.waiting_since is not None:
            self._draw_anomalies()  # how long it has waited

    def _refresh_header(self) -> None:
        if not self.query("#header"):
            return  # not composed yet, or the maps are being laid out anew (a recompose)
        view = cluster_lines.JobView(
            job_name=self.job_name, status=self.status, frame=self.frame,
            n_ranks=len(self.rank_map), ranks_up=self.analysis.ranks_up, now=self.app.clock(),
            paused=self.paused, pause_key=key_for(self, "app.pause"),
            step_stuck_since=self.analysis.progress.still_since,
            step_seconds=self.analysis.step_seconds, incidents=self.incidents,
            polling_since=self.polling_since,
            refresh_seconds=self.settings.refresh_seconds,
            moment=self.moment, replaying=self.replaying,
            live_key=key_for(self, "moment.live"), bundle=self.app.home,
            ended=self.app.ended, earlier_key=key_for(self, "moment.at"),
            goodput=self.analysis.goodput, waiting_since=self.waiting_since,
        )
        self.query_one("#header", Static).update(cluster_lines.header(view, styles_of(self)),
                                                 layout=False)

    def _refresh_rank_status(self) -> None:
        found = self.query("#rank-status")
        if not found:  # the maps are being laid out anew (a resize met a new rank map)
            return
        status = found.first(Static)
        if not self.rank_map.ranks:
            status.update(f"no ranks known yet ({self.rank_map.source})")
            return
        rank = self.rank_map.ranks[self.cursor]
        # The screen's width, not the line's: a line not laid out yet (a first frame, the
        # maps built anew) is 0 or a few cells wide, which would put one value a line.
        width = (self.size.width or self.app.size.width) - 2
        text = cluster_lines.rank_status(rank, self.frame, self.settings.metrics,
                                         styles_of(self), width)
        lines = text.plain.count("\n") + 1
        status.update(text, layout=lines != self._status_lines)  # layout only when its height moves
        self._status_lines = lines

    # -- cursor ------------------------------------------------------------------------

    def select(self, rank: int) -> None:
        """Move the shared cursor to ``rank`` in every map."""
        self.cursor = rank

    def action_select(self, rank: int) -> None:
        """To ``rank``, counted from the end when negative (-1: the last)."""
        self.select(rank % len(self.rank_map) if self.rank_map.ranks else 0)

    def validate_cursor(self, rank: int) -> int:
        return max(0, min(rank, len(self.rank_map) - 1))

    def watch_cursor(self) -> None:
        for panel in self.panels:
            panel.heatmap.set_cursor(self.cursor)
        self._refresh_rank_status()

    def _lead_heatmap(self) -> Heatmap:
        index = (self._shown() or [0])[0]
        return self.query_one(f"#map-{index}", MetricPanel).heatmap

    def action_move(self, dx: int, dy: int) -> None:
        self.select(self._lead_heatmap().move_cursor(dx, dy))

    @on(Heatmap.RankClicked)
    def _clicked(self, event: Heatmap.RankClicked) -> None:
        self.select(event.rank)

    def action_open_rank(self) -> None:
        self.app.open_rank(self.cursor)

    def action_evidence(self) -> None:
        verdict = self.analysis.hang
        if verdict is None:
            self.app.notify(cluster_lines.no_verdict_yet(self.analysis), timeout=6,
                            markup=False)
            return
        frame = self.analysis.frame
        now = frame.time if frame is not None else None
        self.app.push_screen(EvidenceScreen(verdict, self.rank_map, now))

    def action_jump(self) -> None:
        self.app.push_screen(JumpScreen(self.rank_map), self._jumped)

    def _jumped(self, rank: int | None) -> None:
        if rank is not None:
            self.select(rank)

    def action_pause(self) -> None:
        self.paused = not self.paused

    def watch_paused(self) -> None:
        if not self.paused and self.pending is not None:
            self.show(self.pending)
        self._refresh_header()


def summary_texts(metric: MetricDef, summary: tuple[float, float, float] | None,
                  ) -> tuple[str, ...]:
    """"min · med · max", then shorter forms: the median and the worst end, the worst end."""
    if summary is None:
        return ("no data",)
    names = ("min", "med", "max")
    parts = [f"{name} {format_value(metric, v)}" for name, v in zip(names, summary, strict=True)]
    worst = parts[2] if metric.bad == "high" else parts[0]
    pair = " · ".join(parts[1:] if metric.bad == "high" else parts[:2])
    return " · ".join(parts), pair, worst
