"""The `e` screen: the evidence behind a hang verdict: the log lines, the ranks waited for
first, then what the ranks' Flight Recorder dumps say."""

from __future__ import annotations

import re
from functools import partial

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ...widgets.key_footer import KeyFooter
from ...widgets.log_view import smart_case
from ..core.analysis import Analysis
from ..core.hang.log_gaps import NO_LINES_READ
from ..core.hang.triage import HangVerdict
from ..core.model import RankMap
from ..core.moment import shown
from ..core.text import plain
from ..engine.client import ENGINE_FAILURES
from .cluster_lines import no_verdict_yet
from .confirm_dumps import ConfirmDumpsScreen
from .flight_lines import flight_text
from .hints import any_of, key_for, keys_for, sentence
from .line_styles import CLASSES, styles_of
from .reading_keys import Reading, reading_bindings

SHOWN_RANKS = 12


class EvidenceScreen(Reading, ModalScreen[None]):
    """The newest verdict's evidence, redrawn with each analysis (``show_analysis``): when
    the hang ends, it says so above the last verdict's evidence."""

    BINDING_GROUP_TITLE = "Hang evidence"
    BINDINGS = [
        Binding("escape,e,q", "close", "Close", id="evidence.close"),
        # A modal screen hears none of the app's keys: its own, to the same help.
        Binding("question_mark", "app.help", "Help", key_display="?", id="evidence.help",
                tooltip="Show every key of this screen"),
        Binding("d", "request_dumps", "Ask every rank for a dump",
                id="evidence.request_dumps"),
        Binding("B", "app.bundle", "Bundle", id="evidence.bundle",
                tooltip="Write the incident's bundle to hand over, this screen included"),
        *reading_bindings("evidence", show_edges=True),
        Binding("slash", "search", "Search", key_display="/", id="evidence.search",
                tooltip="Find a word in the evidence (smart case, as in the log view)"),
        Binding("n", "next_match(1)", "Next match", show=False, id="evidence.next_match",
                tooltip="The next line matching the search (as in less)"),
        Binding("N", "next_match(-1)", "Previous match", show=False,
                id="evidence.previous_match", tooltip="The previous line matching the search"),
    ]
    COMPONENT_CLASSES = CLASSES
    READ_BOX = "evidence-box"

    def __init__(self, verdict: HangVerdict, rank_map: RankMap,
                 now: float | None = None) -> None:
        super().__init__()
        self.verdict = verdict  # the newest verdict, current or not
        self.rank_map = rank_map
        self.now = verdict.as_of if now is None else now
        self.ended = ""  # what the analysis says now that no hang holds, if none does
        self.search: re.Pattern[str] | None = None  # the last search, for n / N
        self.match_line = -1  # the wrapped line of the match shown

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="evidence-box"):
            yield Static(id="evidence-text")
            closes = any_of(keys_for(self, "evidence.close"))
            hint = f"{closes} closes this screen."
            if self._dumps_on_demand():
                asks = any_of(keys_for(self, "evidence.request_dumps"))
                hint += f" {asks} asks every rank for a Flight Recorder dump (you confirm first)."
            yield Static(sentence(hint), id="help-footer")
        yield Input(placeholder="find in the evidence (Enter; Esc to close)",
                    id="evidence-search")
        yield KeyFooter(first=("app.help", "close"))

    def on_mount(self) -> None:
        self.query_one("#evidence-search").display = False
        self._draw()

    def show_analysis(self, analysis: Analysis) -> None:
        """The newest analysis: its verdict, or that the hang is over (the last verdict's
        evidence kept below, as the last word on it)."""
        frame = analysis.frame
        self.now = frame.time if frame is not None else self.now
        if analysis.hang is not None:
            self.verdict, self.ended = analysis.hang, ""
        else:
            self.ended = no_verdict_yet(analysis)
        self._draw()

    def _draw(self) -> None:
        try:
            text_widget = self.query_one("#evidence-text", Static)
        except NoMatches:  # an analysis before the screen is composed: on_mount draws it
            return
        text_widget.update(self._text())

    def _text(self) -> Text:
        verdict, style = self.verdict, styles_of(self)
        text = Text()
        text.append("Hang triage", style("strong"))
        text.append(f"  {self._when()}\n", style("muted"))
        if self.ended:
            text.append(f"{self.ended}\n", style("quiet"))
            text.append("The last verdict, no longer current:\n", style("muted"))
        text.append(f"{verdict.summary}\n")
        if verdict.disagreement:
            text.append(f"The witnesses disagree: {plain(verdict.disagreement, 400)}\n",
                        style("alarm"))
        text.append("\n")
        named = [*verdict.behind, *(r for r in verdict.evidence if r not in verdict.behind)]
        for rank in named[:SHOWN_RANKS]:
            where = self.rank_map.ranks[rank] if rank < len(self.rank_map) else None
            label = where.title if where else f"rank {rank}"
            waited = rank in verdict.behind
            text.append(f"{label}{'  (waited for)' if waited else ''}\n",
                        style("hang" if waited else "strong"))
            lines = verdict.evidence.get(rank) or [self._no_lines(rank)]
            for line in lines:
                text.append(f"  {line}\n", style("quoted"))
        if len(named) > SHOWN_RANKS:
            text.append(f"… and {len(named) - SHOWN_RANKS} more ranks\n", style("muted"))
        if verdict.flight is not None:
            text.append("\n")
            text.append_text(flight_text(verdict.flight, self._label, style))
        return text

    def _when(self) -> str:
        """"verdict of 14:02:11, 12 s ago" (the poll that asked for its logs)."""
        age = self.verdict.age(self.now)
        if self.verdict.as_of is None or age is None:
            return "verdict of an unknown time"
        return f"verdict of {shown(self.verdict.as_of)}, {age:.0f} s ago"

    # -- moving about ------------------------------------------------------------------

    def action_search(self) -> None:
        field = self.query_one("#evidence-search", Input)
        field.display = True
        field.focus()

    @on(Input.Submitted, "#evidence-search")
    def _searched(self, event: Input.Submitted) -> None:
        event.input.display = False
        self.set_focus(None)
        self.search, self.match_line = smart_case(event.value), -1
        if self.search is not None and not self._show_match(1):
            self.app.notify(f"Not in the evidence: {event.value}", timeout=3, markup=False)

    def action_next_match(self, step: int) -> None:
        if self.search is None:
            search = key_for(self, "evidence.search")
            self.app.notify(f"No search: {search} finds a word in the evidence.", timeout=3,
                            markup=False)
            return
        self._show_match(step)

    def _show_match(self, step: int) -> bool:
        """Scroll to the next (``step`` 1) or previous (-1) line matching the search after
        the one shown, round the end; False when no line matches."""
        pattern = self.search
        width = max(1, self.query_one("#evidence-text", Static).content_region.width)
        lines = self._text().wrap(self.app.console, width)
        matching = [y for y, line in enumerate(lines)
                    if pattern is not None and pattern.search(line.plain)]
        if not matching:
            return False
        after = [y for y in matching if (y - self.match_line) * step > 0]
        self.match_line = (after[0] if step > 0 else after[-1]) if after else (
            matching[0] if step > 0 else matching[-1])
        self.read_box().scroll_to(y=self.match_line, animate=False)
        return True

    def on_key(self, event: events.Key) -> None:
        field = self.query_one("#evidence-search", Input)
        if event.key == "escape" and field.has_focus:
            event.stop()
            field.display = False
            self.set_focus(None)

    def _no_lines(self, rank: int) -> str:
        """Why a rank shows no lines: what could not be read, never that it logged nothing."""
        gaps = self.verdict.log_gaps
        return plain(gaps.of_rank(rank) if gaps else NO_LINES_READ, 400)

    def _label(self, rank: int) -> str:
        where = self.rank_map.ranks[rank] if 0 <= rank < len(self.rank_map) else None
        return where.title if where else f"rank {rank}"

    def action_close(self) -> None:
        self.dismiss(None)

    # -- dumps on demand: off unless configured; nothing written without a yes --------

    def _dumps_on_demand(self) -> bool:
        settings = getattr(self.app, "settings", None)
        return bool(settings and settings.request_dumps and settings.dump_pipes)

    def action_request_dumps(self) -> None:
        if not self._dumps_on_demand():
            self.app.notify("Dumps on demand are off: set [logs] dump_pipes and "
                            "request_dumps = true.", timeout=6, markup=False)
            return
        self._find_pipes()

    @work(thread=True, exclusive=True, group="dump-pipes", exit_on_error=False)
    def _find_pipes(self) -> None:
        """The engine finds the pipes (the UI's process touches no file of the job's)."""
        try:
            found = self.app.engine.find_pipes()
        except ENGINE_FAILURES as error:  # a bundle is read-only; off; a bad pattern
            self.app.call_from_thread(self.app.notify, f"No dumps asked for: {error}",
                                      markup=False)
            return
        self.app.call_from_thread(self.app.push_screen,
                                  ConfirmDumpsScreen(found.described, bool(found.fifos)),
                                  partial(self._confirmed, found.fifos))

    def _confirmed(self, pipes: dict, yes: bool | None) -> None:
        if yes:
            self._ask(pipes)

    @work(thread=True, exclusive=True, group="dump-pipes", exit_on_error=False)
    def _ask(self, pipes: dict) -> None:
        try:
            asked = self.app.engine.request_dumps(pipes)
        except ENGINE_FAILURES as error:
            asked = f"No dumps asked for: {error}"
        self.app.call_from_thread(self.app.notify, plain(asked, 400), timeout=8,
                                  markup=False)
