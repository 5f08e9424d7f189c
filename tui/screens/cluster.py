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
from textual.screen import Screen
from textual.widgets import Static

from ...widgets.anomaly_list import AnomalyList, Row
from ...widgets.heatmap import Heatmap
from ...widgets.key_footer import KeyFooter
from ...widgets.panel import MetricPanel
from ..core.advice.advise import action_on
from ..core.advice.incidents import Incident
from ..core.analysis import Analysis
from ..core.config_values import MetricDef
from ..core.detect.detectors import Anomaly
from ..core.detect.restarts import KIND as RESTART
from ..core.maps.layout import Arrangement
from ..core.maps.levels import PlannedMap
from ..core.metrics import format_value
from ..core.model import Frame, Health, RankMap
from ..core.parallelism import Parallelism, for_job
from ..engine.maps import MapGeometry
from ..engine.snapshot import Snapshot
from ..settings.config import Settings
from . import cluster_lines
from .advice import AdviceScreen
from .evidence import EvidenceScreen
from .hints import key_for
from .incident_detail import IncidentScreen, incident_on
from .jump import JumpScreen
from .line_styles import CLASSES, styles_of
from .too_small import TooSmall

MIN_SIZE = (60, 18)  # below it the maps, the anomalies and the status line do not all fit


class ClusterScreen(Screen):
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
    solo: var[int | None] = var(None, init=False)
    """The one map shown full size (its index), or None for all four."""
    cursor = var(0, init=False)
    """The selected rank, shared by every map."""

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
        self.moment: float | None = None  # the past moment shown (None: the live job)
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
        self.shown, self.moment, self.pending = snapshot, snapshot.at, None
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

    # -- anomalies ---------------------------------------------------------------------

    def _show_anomalies(self, analysis: Analysis) -> None:
        previous = self._current_key()
        self.anomalies = analysis.anomalies
        # the restarts on record follow the active incidents, as resolved rows of their own
        self.incidents = (*analysis.incidents, *(
            Incident(r.anomaly) for r in analysis.restarts if r.key not in self.dismissed))
        keys = [incident.key for incident in self.incidents]
        self.current_incident = (keys.index(previous) if previous in keys
                                 else self._incident_holding(previous))
        self._draw_anomalies()
        marked = frozenset(a.rank for a in self.anomalies if a.rank is not None)
        for panel in self.panels:
            panel.heatmap.set_marks(marked)

    def _incident_holding(self, key: tuple[str, int | None] | None) -> int | None:
        """The row whose incident holds ``key`` under another root: the same trouble, seen
        at another moment or folded anew."""
        if key is None:
            return None
        return next((index for index, incident in enumerate(self.incidents)
                     if any(a.key == key for a in incident.members)), None)

    def _current_key(self) -> tuple[str, int | None] | None:
        if self.current_incident is None or self.current_incident >= len(self.incidents):
            return None
        return self.incidents[self.current_incident].key

    def _draw_anomalies(self) -> None:
        if not self.query("#anomalies"):
            return  # the maps are being laid out anew: the panel is drawn once they are
        rows = [Row(i.severity, self._describe(i), i.pending) for i in self.incidents]
        box = self.query_one("#anomalies", AnomalyList)
        visit = f"{key_for(self, 'anomaly.next')} / {key_for(self, 'anomaly.previous')}"
        counts = cluster_lines.count_by_severity(self.incidents)
        advice = key_for(self, "advice.open")
        box.border_title = (f"anomalies ({counts}): {visit} to visit, {advice} what to do"
                            if rows else "anomalies")
        box.set_rows(rows, self.current_incident, self._verdict_when_clear())

    def _verdict_when_clear(self) -> tuple[str, bool]:
        """What the panel says without a row: that it waits, before the first answer."""
        if self.waiting_since is None:
            return self.analysis.verdict_when_clear
        return cluster_lines.waiting_text(self.status.name,
                                          self.app.clock() - self.waiting_since), False

    def _describe(self, incident: Incident) -> str:
        """"rank 37 gpu-node-004 GPU 5  thermal → straggler 1.29x: GPU 88 °C, …": where,
        the root and what it explains, then the root's own text; first, what to do about
        it, where the advice acts on its node or GPU."""
        root = incident.root
        where = "the whole job"
        if root.rank is not None and root.rank < len(self.rank_map):
            rank = self.rank_map.ranks[root.rank]
            where = f"rank {rank.rank} {rank.place}"
        # The hold goes before the summary, so a long summary cut with … never hides it.
        held = (f" ({root.held:.0f} s of {root.confirm_after:.0f} s)"
                if root.pending and not root.awaiting else "")
        if root.kind == RESTART:
            return f"✓ resolved · {where}  {incident.headline}: {root.summary}"
        return f"{self._advice(incident)}{where}  {incident.headline}{held}: {root.summary}"

    def _advice(self, incident: Incident) -> str:
        """"⇒ drain the node · " before a root whose node or GPU the advice acts on."""
        rank = incident.root.rank
        action = (action_on(self.analysis.actions, rank, self.rank_map)
                  if rank is not None and not incident.pending else None)
        return f"⇒ {action.short} · " if action is not None and action.on_gpu else ""

    def action_next_anomaly(self, step: int) -> None:
        if not self.incidents:
            self.app.notify("No active anomalies.", timeout=3)
            return
        if self.current_incident is None:
            index = 0 if step > 0 else len(self.incidents) - 1
        else:
            index = (self.current_incident + step) % len(self.incidents)
        self._visit(index)

    @on(AnomalyList.Selected)
    def _anomaly_clicked(self, event: AnomalyList.Selected) -> None:
        self._visit(event.index)

    def _visit(self, index: int) -> None:
        self.current_incident = index
        self._draw_anomalies()
        rank = self.incidents[index].rank
        if rank is not None:
            self.select(rank)

    def _chosen_incident(self) -> Incident | None:
        """The highlighted row's incident, else the one on the cursor's rank, else the
        first (None, after saying so, when there is none)."""
        if not self.incidents:
            self.app.notify("No active anomalies.", timeout=3)
            return None
        index = self.current_incident
        if index is not None and index < len(self.incidents):
            return self.incidents[index]
        return incident_on(self.incidents, self.cursor) or self.incidents[0]

    def action_incident_detail(self) -> None:
        chosen = self._chosen_incident()
        if chosen is None:
            return
        frame = self.analysis.frame
        now = frame.time if frame is not None else self.app.clock()
        self.app.push_screen(IncidentScreen(chosen, self.rank_map, now))

    def action_advice(self) -> None:
        if self.waiting_since is not None:  # not even "no advice" before anything is known
            self.app.notify(self._verdict_when_clear()[0], timeout=4, markup=False)
            return
        self.app.push_screen(AdviceScreen(self.analysis.actions))

    def action_since(self) -> None:
        chosen = self._chosen_incident()
        if chosen is not None:
            self.app.go_to_start(chosen.root.since)

    def action_dismiss_restart(self) -> None:
        """Take the highlighted restart's row off the panel."""
        index = self.current_incident
        chosen = self.incidents[index] if index is not None and index < len(self.incidents) \
            else None
        restart = next((r for r in self.analysis.restarts
                        if chosen is not None and r.anomaly == chosen.root), None)
        if restart is None:
            self.app.notify("Only a restart's row can be dismissed: select it with "
                            f"{key_for(self, 'anomaly.next')}.", timeout=4, markup=False)
            return
        self.dismissed.add(restart.key)
        self.current_incident = None
        self._show_anomalies(self.analysis)

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

    # -- views -------------------------------------------------------------------------

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

    def action_pause(self) -> None:
        self.paused = not self.paused

    def watch_paused(self) -> None:
        if not self.paused and self.pending is not None:
            self.show(self.pending)
        self._refresh_header()


def arrangement_of(parallelism: Parallelism) -> Arrangement:
    """The maps' cells for ``parallelism``: a column per data-parallel replica, its pipeline
    stages top to bottom (labelled pp0, pp1, ...), each stage's tensor-parallel ranks
    together."""
    return Arrangement(tuple(parallelism.display_order()),
                       parallelism.stages * parallelism.group, parallelism.group,
                       tuple(f"pp{stage}" for stage in range(parallelism.stages)))


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
