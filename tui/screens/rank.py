"""The rank screen: one rank's values against the job's median, its log tail, its alerts.

This is where on-call goes after spotting a bad cell. What it asks of the engine (logs,
alerts, history, the GPU's model) is asked in workers (``rank_requests``); the screen only
draws what they post.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timezone
from functools import partial

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.widgets import DataTable, Input, Static

from ...widgets.key_footer import KeyFooter
from ...widgets.log_view import LogView
from ...widgets.trend import Trend
from ..core.analysis import Analysis
from ..core.detect.detectors import Anomaly
from ..core.detect.hardware import ledger_lines
from ..core.history import HISTORY_METRICS
from ..core.metrics import format_value
from ..core.model import Frame, Health, RankMap, SourceStatus
from ..core.moment import MomentError, parse_moment
from ..core.text import plain
from ..engine.client import EngineClient
from ..logs.line_time import first_after
from ..settings.config import Settings
from . import rank_lines
from .hints import key_for
from .incident_detail import IncidentScreen, incident_on
from .line_styles import CLASSES, styles_of
from .moment_badge import moment_badge
from .rank_requests import Alerts, Backfill, GpuModel, LogLines, RankRequests
from .too_small import TooSmall

MIN_SIZE = (60, 20)  # below it the trends and the log tail do not both fit
ROOMY_HEIGHT = 34  # from here each trend has its median's row, and the alerts 8 lines
NOTE_CHARS = 4000  # of the note on which files the log reads (a few long paths)
# rank_data's rows, each column as wide as its usual content: fixed, because a width
# worked out from the rows waits for the app to be idle, which a busy console may not be.
ALERT_COLUMNS = (("time", 8), ("alert", 22), ("severity", 8), ("state", 8), ("source", 12),
                 ("summary", 160))
OTHER_METRICS = ("power", "sm_clock", "throttle_reasons", "memory_used", "ecc_dbe", "xid",
                 "gpu_util", "collective_time", "bus_bandwidth")


class RankScreen(RankRequests):
    """Everything about one rank."""

    BINDING_GROUP_TITLE = "Rank"
    COMPONENT_CLASSES = CLASSES  # the styles of the title and the other values
    KEY_WIDGETS = (LogView,)  # widgets whose keys are live here (the keymap's clash check)
    BINDINGS = [
        Binding("escape,q", "back", "Back", id="rank.back", tooltip="Back to the cluster"),
        Binding("left_square_bracket", "step(-1)", "Prev", key_display="[",
                id="rank.previous", tooltip="The previous rank"),
        Binding("right_square_bracket", "step(1)", "Next", key_display="]",
                id="rank.next", tooltip="The next rank"),
        Binding("n", "next(1)", "Anomaly", id="rank.next_anomaly",
                tooltip="The next match of the log search while there is one (as in less), "
                        "else the next rank with an active anomaly"),
        Binding("N", "next(-1)", "Prev anomaly", show=False, id="rank.previous_anomaly",
                tooltip="The previous match of the log search, else the previous rank with "
                        "an active anomaly"),
        Binding("slash", "search", "Search", key_display="/", id="rank.search",
                tooltip="Search the log tail (any case unless you type a capital; "
                        "an empty search clears it)"),
        Binding("i", "incident_detail", "Detail", id="rank.detail",
                tooltip="The whole text of this rank's incident: its root, what is folded "
                        "under it and why"),
        Binding("s", "since", "Since", show=False, id="rank.since",
                tooltip="Show the job as it was when this rank's incident began (in the "
                        "alerts, when the highlighted alert did)"),
    ]

    # What the workers post (``rank_requests``), named here as the handlers take them.
    LogLines, Backfill, Alerts, GpuModel = LogLines, Backfill, Alerts, GpuModel

    def __init__(self, settings: Settings, rank_map: RankMap, rank: int,
                 engine: EngineClient) -> None:
        super().__init__()
        self.settings = settings
        self.rank_map = rank_map
        self.rank = rank
        self.engine = engine
        self.analysis = Analysis(SourceStatus("", Health.STALE, 0.0), rank_map)
        self.earlier: dict[str, list] = {}  # history from before the app's own, by metric
        self.log_note = ""  # which files the log tail reads, or why there are none
        self.moment: float | None = None  # the past moment shown (None: the live job)
        self.replaying: float | None = None  # a moment being replayed, not shown yet
        self.gpu_models: dict[int, str] = {}  # by rank, once the engine said (or failed to)
        self._model_asked: int | None = None  # the rank whose model is being asked for
        self._held_history = None
        self._history_asked = None

    def compose(self) -> ComposeResult:
        yield Static(id="rank-title", markup=False)
        with Vertical(id="rank-trends"):
            for metric_id in HISTORY_METRICS:
                yield Trend(self.settings.metrics[metric_id].title, id=f"trend-{metric_id}")
        yield Static(id="rank-others", markup=False)
        yield Static(id="log-title", markup=False)
        yield LogView(id="rank-log")
        yield Input(placeholder="search the log (Enter; Esc to close)", id="log-search")
        yield Static(id="alerts-title", markup=False)
        yield DataTable(id="rank-alerts", cursor_type="row", zebra_stripes=True)
        yield TooSmall("rank screen", MIN_SIZE)
        yield KeyFooter(first=("help", "back"))

    def on_mount(self) -> None:
        table = self.query_one("#rank-alerts", DataTable)
        for label, width in ALERT_COLUMNS:
            table.add_column(label, width=width)
        self.query_one("#log-search").display = False
        self.query_one(LogView).focus()
        self._fit(self.app.size)
        self._open_rank()

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size)

    def _fit(self, size: Size) -> None:
        """Say so below the size the screen needs; in a short terminal, shorter panels."""
        self.query_one(TooSmall).check(self, size)
        self.set_class(size.height < ROOMY_HEIGHT, "-short")

    # -- data from the app -------------------------------------------------------------

    @property
    def frame(self) -> Frame | None:
        return self.analysis.frame

    @property
    def anomalies(self) -> tuple[Anomaly, ...]:
        return self.analysis.anomalies

    def show_analysis(self, analysis: Analysis, moment: float | None = None) -> None:
        """``analysis`` of the past ``moment``, or of the live job (None)."""
        if moment != self.moment:
            self.moment = moment
            self._place_moment()
            self._draw_log_title()
            self._load_alerts(self.rank)  # the alerts of the hour before the moment
        self.analysis = self._with_held_history(analysis)
        self._draw_values()
        self._ask_history()

    def _with_held_history(self, analysis: Analysis) -> Analysis:
        """``analysis``, with the rank's history last had for this rank and moment when it
        came without one (an engine apart keeps the history): the trends keep it until the
        newer one comes."""
        held = self._held_history
        if analysis.history is not None or held is None or held[0] != (self.rank, self.moment):
            return analysis
        return replace(analysis, history=held[1])

    def show_replaying(self, moment: float | None) -> None:
        """Say that ``moment`` is being replayed (None: no longer)."""
        self.replaying = moment
        self._draw_values()

    def _open_rank(self) -> None:
        self.query_one("#rank-log", LogView).clear()
        self._draw_values()
        self.log_note = "looking for this rank's files…"
        self._draw_log_title()
        self.query_one("#alerts-title", Static).update("alerts: loading…")
        self.earlier = {}
        self._follow_log(self.rank)
        self._load_alerts(self.rank)
        self._backfill(self.rank)
        self._ask_history()

    def _draw_values(self) -> None:
        rank = self.rank_map.ranks[self.rank]
        # causes before what they explain, as the incidents fold them
        mine = [a for incident in self.analysis.incidents for a in incident.members
                if a.rank == self.rank]
        title = rank_lines.title(rank, self.rank_map, mine,
                                 rank_lines.hang_note(self.analysis.hang, self.rank),
                                 styles_of(self), self._gpu_model(),
                                 ledger_lines(self.analysis.ledger, self.rank),
                                 judged=self.frame is not None)
        if self.moment is not None:
            badge = moment_badge(self.moment, self.app.clock(), key_for(self, "moment.live"),
                                 self.replaying, self.app.home)
            title = Text.assemble((badge, styles_of(self)("moment")), "\n", title,
                                  overflow="fold")
        self.query_one("#rank-title", Static).update(title)
        for metric_id in HISTORY_METRICS:
            self._draw_trend(metric_id)
        others = rank_lines.other_values(self.frame, self.rank, self.settings, OTHER_METRICS,
                                         styles_of(self), self.analysis.summaries,
                                         self.analysis.down_ranks.get(self.rank))
        self.query_one("#rank-others", Static).update(others)

    def _gpu_model(self) -> str:
        """The rank's GPU model once the engine said; "" meanwhile, or when the engine could
        not say (not asked again). Asked in a thread, once per rank while it answers: an
        engine in its own process is a round trip away, and a busy or stuck one must not
        hold the screen."""
        if self.rank not in self.gpu_models and self._model_asked != self.rank:
            self._model_asked = self.rank
            self._ask_gpu_model(self.rank)
        return self.gpu_models.get(self.rank, "")

    def _draw_trend(self, metric_id: str) -> None:
        metric = self.settings.metrics[metric_id]
        history = self.analysis.history
        points = history.series(metric_id, self.rank) if history is not None else []
        oldest = points[0].time if points else float("inf")
        if self.moment is not None:  # nothing from after the moment shown
            oldest = min(oldest, self.moment + 1e-3)
        points = [p for p in self.earlier.get(metric_id, []) if p.time < oldest] + points
        value = self.frame.value(metric_id, self.rank) if self.frame else float("nan")
        summary = self.analysis.summaries.get(metric_id)
        median = summary[1] if summary else float("nan")
        trend = self.query_one(f"#trend-{metric_id}", Trend)
        shown = metric_id not in self.analysis.gpu.never  # no GPU has ever exported it
        if trend.display != shown:
            trend.display = shown
        trend.show(format_value(metric, value), format_value(metric, median),
                   [p.value for p in points], [p.median for p in points])

    @on(GpuModel)
    def _gpu_model_said(self, message: GpuModel) -> None:
        if self._model_asked == message.rank:
            self._model_asked = None  # an unknown model is asked again at the next draw
        if message.model != "":  # said, or failed to: kept ("" for a failure)
            self.gpu_models[message.rank] = message.model or ""
            if message.rank == self.rank:
                self._draw_values()

    @on(Backfill)
    def _backfilled(self, message: Backfill) -> None:
        if message.rank == self.rank:
            self.earlier = message.points
            self._draw_values()

    @on(LogLines)
    def _log_lines(self, message: LogLines) -> None:
        if message.rank != self.rank:
            return
        log = self.query_one("#rank-log", LogView)
        if message.tail:
            log.clear()
        first = not log.lines
        log.add(message.lines)
        if first and self.moment is not None:
            self._place_moment()
        note = plain(message.note, NOTE_CHARS)  # paths are outside data, like log lines
        if note != self.log_note:
            self.log_note = note
            self._draw_log_title()

    def _place_moment(self) -> None:
        """Mark the moment shown among the log's lines (those stamped after it below the
        mark, the view on it); back to live, take the mark away and follow the end."""
        log = self.query_one("#rank-log", LogView)
        if self.moment is None:
            log.clear_moment()
        elif log.lines:
            before = first_after(log.unmarked, self.moment)
            log.mark_moment(before, rank_lines.moment_mark(self.moment, key_for(log,
                                                                                "log.bottom")))

    @on(LogView.Changed)
    def _draw_log_title(self) -> None:
        """The log's modes (following, warnings only, the search), then which files."""
        log = self.query_one(LogView)
        title = self.query_one("#log-title", Static)
        text = rank_lines.log_title(
            log.following, log.serious_only, log.search, len(log.matches), log.current,
            self.log_note, partial(key_for, log), partial(key_for, self), styles_of(self))
        if self.moment is not None and self.moment == self.app.home:  # a bundle's own
            text = Text.assemble(("the tail as the bundle saved it: ",
                                  styles_of(self)("warn")), text)
        elif self.moment is not None:  # the files hold what was written since, too
            text = Text.assemble(("the tail as it is now, the moment shown marked in it: ",
                                  styles_of(self)("warn")), text)
        title.update(text)
        title.tooltip = Content(self.log_note)  # whole, however narrow; never markup

    @on(Alerts)
    def _alerts(self, message: Alerts) -> None:
        if message.rank != self.rank:
            return
        table = self.query_one("#rank-alerts", DataTable)
        table.clear()
        table.add_rows([[Text(cell) for cell in row] for row in message.rows])  # never markup
        self.query_one("#alerts-title", Static).update(f"alerts: {message.note}")

    # -- keys --------------------------------------------------------------------------

    def action_back(self) -> None:
        if not self._close_search():
            self.app.pop_screen()

    def on_key(self, event: events.Key) -> None:
        # Esc closes the search field even when the back key is another: a text field's own
        # convention, like its editing keys (which may hold the back key).
        if event.key == "escape" and self._close_search():
            event.stop()

    def _close_search(self) -> bool:
        """Hide the search field if it is shown; whether it was."""
        search = self.query_one("#log-search", Input)
        if not search.display:
            return False
        search.display = False
        self.query_one(LogView).focus()
        return True

    def action_step(self, step: int) -> None:
        self.rank = (self.rank + step) % len(self.rank_map)
        self._open_rank()

    def action_next(self, step: int) -> None:
        """n / N: through the search's matches while there is a search, else through the
        ranks with an active anomaly."""
        log = self.query_one(LogView)
        if log.search:
            log.next_match(step)
            if not log.matches:
                self.app.notify(f"Nothing in this log matches {log.search!r}.", timeout=3,
                                markup=False)
            return
        ranks = sorted({a.rank for a in self.anomalies if a.rank is not None})
        if not ranks:
            self.app.notify("No rank has an active anomaly.", timeout=3)
            return
        later = [r for r in ranks if (r - self.rank) * step > 0]
        self.rank = (min(later, key=lambda r: abs(r - self.rank)) if later
                     else (ranks[0] if step > 0 else ranks[-1]))
        self._open_rank()

    def action_incident_detail(self) -> None:
        found = incident_on(self.analysis.incidents, self.rank)
        if found is None:
            self.app.notify("No active anomaly on this rank.", timeout=3)
            return
        frame = self.frame
        now = frame.time if frame is not None else self.app.clock()
        self.app.push_screen(IncidentScreen(found, self.rank_map, now))

    def action_since(self) -> None:
        table = self.query_one("#rank-alerts", DataTable)
        if table.has_focus and table.row_count:
            self._go_to_alert(str(table.get_row_at(table.cursor_row)[0]))
            return
        found = incident_on(self.analysis.incidents, self.rank)
        if found is None:
            self.app.notify("No active anomaly on this rank.", timeout=3)
            return
        self.app.go_to_start(found.root.since)

    def _go_to_alert(self, began: str) -> None:
        """The moment an alert of the last hour began, as its row says it (UTC, to the
        second: the same time today, or yesterday when today's is still to come)."""
        try:
            moment = parse_moment(began, self.app.clock(), timezone.utc)
        except MomentError as error:
            self.app.notify(str(error), timeout=5, markup=False)
            return
        self.app.go_to_start(moment)

    def action_search(self) -> None:
        search = self.query_one("#log-search", Input)
        search.value = ""  # a fresh search; Enter on nothing clears the last one
        search.display = True
        search.focus()

    @on(Input.Submitted, "#log-search")
    def _searched(self, event: Input.Submitted) -> None:
        self.query_one(LogView).set_search(event.value)
        event.input.display = False
        self.query_one(LogView).focus()
