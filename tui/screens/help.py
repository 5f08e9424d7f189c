"""The `?` screen: every key of the app and of the screen beneath, read from their bindings
so the list cannot drift from what the keys do."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from .hints import any_of, bound_keys, keys_for, sentence
from .line_styles import CLASSES, Styles, styles_of
from .reading_keys import Reading, reading_bindings

# The keys that mean the same on every screen (as shipped: a [keys] table may move them).
GRAMMAR = (
    ("j k", "down / up (the arrows too)"),
    ("g G", "first / last (Home / End too)"),
    ("/", "search"),
    ("n N", "next / previous: the search's match while there is one, else the anomaly"),
    ("?", "help"),
    ("Esc", "back (q too; on the cluster q quits)"),
)


class HelpScreen(Reading, ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close", id="help.close"),
                *reading_bindings("help")]
    COMPONENT_CLASSES = CLASSES
    READ_BOX = "help-box"

    def __init__(self, beneath: Screen) -> None:
        super().__init__()
        self.beneath = beneath

    def groups(self) -> list[tuple[str, list[BindingType]]]:
        """The keys listed, by group: the screen beneath, its focused widget, everywhere."""
        palette = Binding(self.app.COMMAND_PALETTE_BINDING, "command_palette", "Commands",
                          tooltip="The command palette: go to a rank or host, show a "
                                  "metric, change the view, show a past moment")
        groups = [
            (getattr(self.beneath, "BINDING_GROUP_TITLE", "Screen"), self.beneath.BINDINGS),
            ("Everywhere", [*self.app.BINDINGS, palette]),
        ]
        focused = self.beneath.focused
        if focused is not None and getattr(focused, "BINDING_GROUP_TITLE", None):
            groups.insert(1, (focused.BINDING_GROUP_TITLE, focused.BINDINGS))
        return groups

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            detail = getattr(getattr(self.beneath, "status", None), "detail", "")
            if detail:  # what the header has no room for
                notes = "\n".join(f"  {note}" for note in detail.split("; "))
                yield Static(Text(f"The data source\n{notes}\n"), id="help-source")
            table = key_table(self.groups(), partial(bound_keys, self.app), styles_of(self),
                              shared=GRAMMAR)
            yield Static(table, id="help-keys")
            closes = any_of(keys_for(self, "help.close"))
            quits = any_of(keys_for(self, "app.quit"))
            yield Static(sentence(f"{closes} closes this screen; {quits} quits ranktop from "
                                  "any screen."), id="help-footer")

    def action_close(self) -> None:
        self.dismiss(None)



def key_table(groups: Sequence[tuple[str, Iterable[BindingType]]],
              keys: Callable[[Binding], list[str]], style: Styles,
              shared: Sequence[tuple[str, str]] = ()) -> Table:
    """Two columns, keys and what they do, one block per group of bindings; ``keys`` gives
    the keys a binding answers to now; ``shared``: (keys, meaning) of the keys every screen
    shares, a last block."""
    table = Table(box=None, show_header=False, padding=(0, 2))
    table.add_column(style=style("key"), no_wrap=True)
    table.add_column()
    for title, bindings in groups:
        table.add_row(Text.assemble((title, style("strong"))), "")
        for binding in bindings:
            if not isinstance(binding, Binding):
                continue
            table.add_row(Text(", ".join(keys(binding))),
                          Text(binding.tooltip or binding.description))
        table.add_row("", "")
    if shared:
        table.add_row(Text("On every screen", style("strong")), "")
        for shared_keys, meaning in shared:
            table.add_row(Text(shared_keys), Text(meaning))
    return table
