"""The `e` screen: the evidence behind a hang verdict: the log lines, the ranks waited for
first, then what the ranks' Flight Recorder dumps say."""

from __future__ import annotations

from functools import partial

from ranktop.tui.core.hang import HangVerdict
from ranktop.tui.core.log_gaps import NO_LINES_READ
from ranktop.tui.core.model import RankMap
from ranktop.tui.core.text import plain
from ranktop.tui.flight.dump_paths import PatternError
from ranktop.tui.flight.pipes import describe, find_pipes, named_pipes, request_dumps
from ranktop.tui.screens.confirm_dumps import ConfirmDumpsScreen
from ranktop.tui.screens.flight_lines import flight_text
from ranktop.tui.screens.hints import any_of, keys_for, sentence
from ranktop.tui.screens.line_styles import CLASSES, styles_of
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

SHOWN_RANKS = 12


class EvidenceScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,e,q", "close", "Close", id="evidence.close"),
                Binding("d", "request_dumps", "Ask every rank for a dump",
                        id="evidence.request_dumps")]
    COMPONENT_CLASSES = CLASSES

    def __init__(self, verdict: HangVerdict, rank_map: RankMap) -> None:
        super().__init__()
        self.verdict = verdict
        self.rank_map = rank_map

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="evidence-box"):
            yield Static(self._text())
            closes = any_of(keys_for(self, "evidence.close"))
            hint = f"{closes} closes this screen."
            if self._dumps_on_demand():
                asks = any_of(keys_for(self, "evidence.request_dumps"))
                hint += f" {asks} asks every rank for a Flight Recorder dump (you confirm first)."
            yield Static(sentence(hint), id="help-footer")

    def _text(self) -> Text:
        verdict, style = self.verdict, styles_of(self)
        text = Text()
        text.append("Hang triage\n", style("strong"))
        text.append(f"{verdict.summary}\n")
        if verdict.disagreement:
            text.append(f"The witnesses disagree: {plain(verdict.disagreement, 400)}\n",
                        style("alarm"))
        text.append("\n")
        shown = [*verdict.behind, *(r for r in verdict.evidence if r not in verdict.behind)]
        for rank in shown[:SHOWN_RANKS]:
            where = self.rank_map.ranks[rank] if rank < len(self.rank_map) else None
            label = where.title if where else f"rank {rank}"
            waited = rank in verdict.behind
            text.append(f"{label}{'  (waited for)' if waited else ''}\n",
                        style("hang" if waited else "strong"))
            lines = verdict.evidence.get(rank) or [self._no_lines(rank)]
            for line in lines:
                text.append(f"  {line}\n", style("quoted"))
        if len(shown) > SHOWN_RANKS:
            text.append(f"… and {len(shown) - SHOWN_RANKS} more ranks\n", style("muted"))
        if verdict.flight is not None:
            text.append("\n")
            text.append_text(flight_text(verdict.flight, self._label, style))
        return text

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
        self._find_pipes(self.app.settings.dump_pipes, len(self.rank_map))

    @work(thread=True, exclusive=True, group="dump-pipes")
    def _find_pipes(self, pattern: str, world_size: int) -> None:
        try:
            pipes = find_pipes(pattern, world_size)
        except (PatternError, OSError) as error:
            self.app.call_from_thread(self.app.notify, f"Cannot look for the pipes: {error}",
                                      markup=False)
            return
        text = describe(pipes, world_size)
        fifos, _ = named_pipes(pipes)
        self.app.call_from_thread(self.app.push_screen, ConfirmDumpsScreen(text, bool(fifos)),
                                  partial(self._confirmed, fifos))

    def _confirmed(self, pipes: dict, yes: bool | None) -> None:
        if yes:
            self._ask(pipes)

    @work(thread=True, exclusive=True, group="dump-pipes")
    def _ask(self, pipes: dict) -> None:
        asked = request_dumps(pipes)
        self.app.call_from_thread(self.app.notify, plain(asked.summary(), 400), timeout=8,
                                  markup=False)
