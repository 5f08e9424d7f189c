"""The incident detail: every word of the selected incident, wrapped to the screen's width.

The panel gives an incident one line, cut at the terminal's edge; this screen gives its
root and each anomaly folded under it whole: where, how severe, since when, its own text,
its details, what confirmed it or what it waits for, and the rule that folds it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...widgets.key_footer import KeyFooter
from ..core.advice.incidents import Incident, explained_by
from ..core.anomaly import Anomaly
from ..core.model import RankMap
from ..core.moment import shown
from ..core.text import plain
from .hints import any_of, keys_for, sentence
from .line_styles import CLASSES, Styles, styles_of
from .reading_keys import Reading, reading_bindings


def where(anomaly: Anomaly, rank_map: RankMap) -> str:
    """"rank 455 gpu-node-056 GPU 7", or "the whole job"."""
    if anomaly.rank is None:
        return "the whole job"
    if anomaly.rank < len(rank_map):
        rank = rank_map.ranks[anomaly.rank]
        return f"rank {rank.rank} {rank.place}"
    return f"rank {anomaly.rank}"


def incident_on(incidents: Sequence[Incident], rank: int) -> Incident | None:
    """The first (most pressing) incident with an anomaly on ``rank``."""
    return next((i for i in incidents if any(a.rank == rank for a in i.members)), None)


def incident_text(incident: Incident, rank_map: RankMap, now: float, style: Styles) -> Group:
    """The incident's root, then each anomaly it explains, each with every word it has: a
    table each, so that a long text wraps beside its name, not under it."""
    parts: list[RenderableType] = [Text(incident.headline, style("strong"))]
    parts += _member(incident.root, rank_map, now, style, ())
    if incident.explained:
        parts += [Text(""), Text("Explained by it, folded under it:", style("strong"))]
    for anomaly in incident.explained:
        found = explained_by(anomaly, incident.members, rank_map)
        why = () if found is None else (
            ("why folded", f"{found[0].name} on {where(found[0], rank_map)} explains it: "
                           f"{found[1].why}"),)
        parts += _member(anomaly, rank_map, now, style, why)
    return Group(*parts)


def _member(anomaly: Anomaly, rank_map: RankMap, now: float, style: Styles,
            more: tuple[tuple[str, str], ...]) -> list[RenderableType]:
    head = Text()
    if anomaly.pending:
        head.append("◌ pending ", style("muted"))
    else:
        head.append(f"● {anomaly.severity} ", style(anomaly.severity))
    head.append(anomaly.label, style("strong"))
    head.append(f"  {where(anomaly, rank_map)}")
    age = max(0.0, now - anomaly.since)
    rows = [("since", f"{shown(anomaly.since)} ({age:.0f} s ago)"),
            ("state", anomaly.state),
            ("what", plain(anomaly.summary, 2000)),
            ("details", plain(anomaly.detail, 2000)), *more]
    table = Table.grid(padding=(0, 1))
    table.add_column(style=style("muted"), no_wrap=True, width=12)
    table.add_column(overflow="fold")
    for name, value in rows:
        if value:
            table.add_row(f"  {name}", Text(value))  # a Text: never markup
    return [Text(""), head, table]


class IncidentScreen(Reading, ModalScreen[None]):
    """The selected incident, whole; it scrolls when longer than the screen."""

    BINDING_GROUP_TITLE = "Incident"
    BINDINGS = [
        Binding("escape,i,q", "close", "Close", id="incident.close"),
        # A modal screen hears none of the app's keys: its own, to the same help.
        Binding("question_mark", "app.help", "Help", key_display="?", id="incident.help",
                tooltip="Show every key of this screen"),
        *reading_bindings("incident"),
    ]
    COMPONENT_CLASSES = CLASSES
    READ_BOX = "incident-box"

    def __init__(self, incident: Incident, rank_map: RankMap, now: float) -> None:
        super().__init__()
        self.incident, self.rank_map, self.now = incident, rank_map, now

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="incident-box"):
            yield Static(id="incident-text", markup=False)
            closes = any_of(keys_for(self, "incident.close"))
            yield Static(sentence(f"{closes} closes this screen."), id="help-footer")
        yield KeyFooter(first=("app.help", "close"))

    def on_mount(self) -> None:
        self.query_one("#incident-box").border_title = "incident"
        text = incident_text(self.incident, self.rank_map, self.now, styles_of(self))
        self.query_one("#incident-text", Static).update(text)

    def action_close(self) -> None:
        self.dismiss(None)
