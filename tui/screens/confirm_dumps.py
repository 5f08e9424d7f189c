"""The confirmation before ranktop asks every rank for a Flight Recorder dump: it says what
would be written where, and only an explicit yes writes anything."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .hints import any_of, keys_for, sentence


class ConfirmDumpsScreen(ModalScreen[bool]):
    """Returns True only when the user said yes (and there is something to write)."""

    BINDINGS = [Binding("y", "confirm", "Write", id="dumps.confirm"),
                Binding("escape,n,q", "cancel", "Cancel", id="dumps.cancel")]

    def __init__(self, description: str, writable: bool) -> None:
        super().__init__()
        self.description = description
        self.writable = writable

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="evidence-box"):
            yield Static(Text("Ask every rank for a Flight Recorder dump?\n\n"
                              + self.description))
            cancel = any_of(keys_for(self, "dumps.cancel"))
            confirm = any_of(keys_for(self, "dumps.confirm"))
            hint = (f"{confirm} writes, {cancel} cancels." if self.writable
                    else f"{cancel} closes this screen.")
            yield Static(Text(sentence(hint)), id="help-footer")

    def action_confirm(self) -> None:
        self.dismiss(self.writable)

    def action_cancel(self) -> None:
        self.dismiss(False)
