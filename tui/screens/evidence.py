"""The `e` screen: the evidence behind a hang verdict: the log lines, the ranks waited for
first, then what the ranks' Flight Recorder dumps say."""

from __future__ import annotations

from ranktop.tui.core.hang import HangVerdict
from ranktop.tui.core.model import RankMap
from ranktop.tui.logs.text import plain
from ranktop.tui.screens.flight_lines import flight_text
from ranktop.tui.screens.hints import any_of, keys_for, sentence
from ranktop.tui.screens.line_styles import CLASSES, styles_of
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

SHOWN_RANKS = 12


class EvidenceScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,e,q", "close", "Close", id="evidence.close")]
    COMPONENT_CLASSES = CLASSES

    def __init__(self, verdict: HangVerdict, rank_map: RankMap) -> None:
        super().__init__()
        self.verdict = verdict
        self.rank_map = rank_map

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="evidence-box"):
            yield Static(self._text())
            closes = any_of(keys_for(self, "evidence.close"))
            yield Static(sentence(f"{closes} closes this screen."), id="help-footer")

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
            lines = verdict.evidence.get(rank) or ["(no lines: this rank logged nothing)"]
            for line in lines:
                text.append(f"  {line}\n", style("quoted"))
        if len(shown) > SHOWN_RANKS:
            text.append(f"… and {len(shown) - SHOWN_RANKS} more ranks\n", style("muted"))
        if verdict.flight is not None:
            text.append("\n")
            text.append_text(flight_text(verdict.flight, self._label, style))
        return text

    def _label(self, rank: int) -> str:
        where = self.rank_map.ranks[rank] if 0 <= rank < len(self.rank_map) else None
        return where.title if where else f"rank {rank}"

    def action_close(self) -> None:
        self.dismiss(None)
