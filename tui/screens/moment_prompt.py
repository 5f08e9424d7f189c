"""The prompt for a past moment: type a time (as ``--at`` takes it) and the console shows
the job as it was then. A time that cannot be read is said here, and the prompt stays."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from ..core.moment import MOMENT_HELP, MomentError, parse_moment


class MomentPrompt(ModalScreen[float | None]):
    """Returns the moment typed (epoch seconds), or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="moment_prompt.cancel")]
    KEY_WIDGETS = (Input,)  # widgets whose keys are live here (the keymap's clash check)

    def __init__(self, clock: Callable[[], float]) -> None:
        super().__init__()
        self.clock = clock

    def compose(self) -> ComposeResult:
        with Vertical(id="moment-box"):
            yield Label(f"Show the job as it was at {MOMENT_HELP}", markup=False)
            yield Input(placeholder="e.g. 03:12:40, -15m, 2026-11-24T03:12:40Z",
                        id="moment-input")
            yield Label("", id="moment-error", markup=False)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        try:
            moment = parse_moment(event.value, self.clock())
        except MomentError as error:
            self.query_one("#moment-error", Label).update(Text(str(error)))
            return
        self.dismiss(moment)

    def action_cancel(self) -> None:
        self.dismiss(None)
