"""The jobs list: every job the backend holds, one row each, worst first.

The header says how many jobs are unhealthy; ``/`` filters the rows by name, owner or fault;
Enter opens the job's console (the app does that: ``open_job``), whose Esc or q comes back
here. Rows come from the engine's fleet snapshots; the screen computes nothing but which
rows the filter keeps. Every word in a row was made plain from its label (core/fleet_cells).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from ...widgets.key_footer import KeyFooter
from ..core.fleet import JobRow, Verdict
from ..core.fleet_cells import COLUMNS, cells, cut, fitted, headline
from ..core.moment import ago
from ..engine.fleet_snapshot import FleetSnapshot
from ..screens.cluster import ClusterScreen
from .data_text import escaped

TITLES = {"job": "Job", "ranks": "Ranks", "progress": "Progress", "worst": "Worst",
          "alerts": "Alerts", "goodput": "Goodput", "owner": "Owner", "shares": "Shares nodes"}
STYLE_OF = {Verdict.STALLED: "jobs--stalled", Verdict.MISSING: "jobs--missing",
            Verdict.CRITICAL: "jobs--critical", Verdict.TROUBLED: "jobs--troubled",
            Verdict.HEALTHY: "jobs--healthy"}


class JobsTable(DataTable):
    """The jobs, a row each. Enter, which the table takes before the screen, opens the
    highlighted job, and says so in the footer."""

    BINDINGS = [Binding("enter", "select_cursor", "Open", id="jobs.table_open",
                        tooltip="Open the job's console")]


class JobsScreen(Screen):
    COMPONENT_CLASSES = set(STYLE_OF.values())
    BINDINGS = [
        Binding("enter", "open_job", "Open", id="jobs.open", tooltip="Open the job's console"),
        Binding("slash", "filter", "Search", key_display="/", id="jobs.filter",
                tooltip="Keep the rows whose name, owner or fault holds some text"),
        Binding("escape", "clear_filter", "Cancel", show=False, id="jobs.clear",
                tooltip="Clear the filter"),
        Binding("q", "app.quit", "Quit", id="jobs.quit", tooltip="Quit ranktop"),
    ]

    def __init__(self, source_name: str) -> None:
        super().__init__()
        self.source_name = source_name
        self.snapshot = FleetSnapshot(0)
        self.shown: list[JobRow] = []  # the rows the filter keeps, in the table's order
        self.filter_text = ""

    def compose(self) -> ComposeResult:
        yield Static(id="jobs-header", markup=False)
        yield Input(placeholder="filter the jobs (Enter keeps it; Esc clears it)",
                    id="jobs-filter")
        yield JobsTable(id="jobs-table", cursor_type="row", zebra_stripes=True)
        yield KeyFooter(first=("select_cursor", "open_job", "filter", "app.quit"))

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in COLUMNS:
            table.add_column(TITLES[column], key=column)
        self.query_one(Input).display = False
        table.focus()
        self._draw()

    def show_snapshot(self, snapshot: FleetSnapshot) -> None:
        self.snapshot = snapshot
        if self.is_mounted:
            self._draw()

    def selected_job(self) -> str | None:
        table = self.query_one(DataTable)
        if not self.shown or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row].facts.name

    def has_job(self, name: str) -> bool:
        return any(row.facts.name == name for row in self.snapshot.rows)

    def select_job(self, names: Sequence[str]) -> None:
        """The cursor on the row of the first of ``names`` the list holds (the filter
        cleared, so that the row is shown)."""
        wanted = next((name for name in names if self.has_job(name)), None)
        if wanted is None:
            return
        self.filter_text = ""
        self._close_filter()
        rows = [row.facts.name for row in self.shown]
        self.query_one(DataTable).move_cursor(row=rows.index(wanted), animate=False)

    # -- drawing -------------------------------------------------------------------------

    def _draw(self) -> None:
        self._draw_header()
        table = self.query_one(DataTable)
        keep = self.selected_job()
        needle = self.filter_text.casefold()
        self.shown = [row for row in self.snapshot.rows if _matches(row, needle)]
        said = [cells(row) for row in self.shown]
        widths = fitted([TITLES, *said], self._room(table))
        table.clear()
        for row, words in zip(self.shown, said, strict=True):
            style = self.get_component_rich_style(STYLE_OF[row.verdict], partial=True)
            table.add_row(*(Text(cut(words[column], widths[column]), style=style)
                            for column in COLUMNS))
        names = [row.facts.name for row in self.shown]
        if keep in names:  # the cursor stays on its job as the rows move
            table.move_cursor(row=names.index(keep), animate=False)

    def _room(self, table: DataTable) -> int:
        """The characters the cells have in a row: the table's width less the cells' padding,
        and the vertical scrollbar's where the rows will not all show."""
        padding = 2 * table.cell_padding * len(COLUMNS)
        scrolls = len(self.shown) + 1 > table.size.height  # the rows and the titles
        bar = table.styles.scrollbar_size_vertical if scrolls else 0
        return table.size.width - padding - bar

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self._draw)  # once the table has its new size

    def _draw_header(self) -> None:
        s = self.snapshot
        if s.time is None:
            said = f"reading the jobs from {self.source_name}…"
        else:
            age = ago(self.app.clock() - s.time)
            rules = " · from the recording rules" if s.recorded else ""
            said = f"{headline(s.rows)} · {self.source_name} · read {age} ago{rules}"
        if s.error:
            said += f"\nthe last refresh failed: {s.error}"
        elif s.not_answered:
            said += f"\nnot answered: {', '.join(sorted(s.not_answered))}"
        elif self.filter_text:
            said += f"\nfilter: {self.filter_text} ({len(self.shown)} shown)"
        header = self.query_one("#jobs-header", Static)
        header.update(Text(said))
        header.set_class(bool(s.unhealthy), "-unhealthy")

    # -- keys ----------------------------------------------------------------------------

    def action_open_job(self) -> None:
        name = self.selected_job()
        if name is not None:
            self.app.open_job(name)

    @on(DataTable.RowSelected)
    def _row_chosen(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_job()

    def action_filter(self) -> None:
        box = self.query_one(Input)
        box.display = True
        box.value = self.filter_text
        box.focus()

    def action_clear_filter(self) -> None:
        self.filter_text = ""
        self._close_filter()

    @on(Input.Changed, "#jobs-filter")
    def _filter_typed(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip()
        self._draw()

    @on(Input.Submitted, "#jobs-filter")
    def _filter_kept(self, event: Input.Submitted) -> None:
        self._close_filter()

    def _close_filter(self) -> None:
        self.query_one(Input).display = False
        self.query_one(DataTable).focus()
        self._draw()


def _matches(row: JobRow, needle: str) -> bool:
    if not needle:
        return True
    f = row.facts
    return any(needle in text.casefold()
               for text in (f.name, f.owner, row.worst, row.next_worst))


class JobConsoleScreen(ClusterScreen):
    """A job's cluster screen opened from the list: Esc or q goes back to the list."""

    BINDINGS = [
        Binding("q,escape", "app.back_to_jobs", "Back", id="cluster.quit",
                tooltip="Back to the jobs list"),
    ]


class JobCommands(Provider):
    """The palette on the jobs list: typing part of a job's name offers to open it."""

    async def search(self, query: str) -> Hits:
        jobs = next((s for s in self.app.screen_stack if isinstance(s, JobsScreen)), None)
        if jobs is None or getattr(self.app, "job_open", None) is not None:
            return
        matcher = self.matcher(query)
        for row in jobs.snapshot.rows:
            name = f"job: open {row.facts.name}"
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(escaped(name)),
                          partial(self.app.open_job, row.facts.name),
                          help=escaped(row.worst or "healthy"))
