"""The `/` prompt: type a rank number, a host name or host:gpu, and the cursor goes there."""

from __future__ import annotations

from ranktop.tui.core.model import RankMap
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class JumpScreen(ModalScreen[int | None]):
    """Returns the rank to select, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="jump.cancel")]
    KEY_WIDGETS = (Input,)  # widgets whose keys are live here (the keymap's clash check)

    def __init__(self, rank_map: RankMap) -> None:
        super().__init__()
        self.rank_map = rank_map

    def compose(self) -> ComposeResult:
        with Vertical(id="jump-box"):
            yield Label(f"Go to rank (0-{len(self.rank_map) - 1}), host, or host:gpu")
            yield Input(placeholder="e.g. 37, gpu-node-004, gpu-node-004:5", id="jump-input")
            yield Label("", id="jump-error", markup=False)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        rank = self.rank_map.find(event.value)
        if rank is None:
            self.query_one("#jump-error", Label).update(f"No rank or host matches {event.value!r}")
            return
        self.dismiss(rank.rank)

    def action_cancel(self) -> None:
        self.dismiss(None)
