"""The least a Textual app does for the keys `bench/keys.py` times: "/" opens a search box,
Enter on a rank number shows that rank's line. No polling, no maps: what Textual itself
costs from a key to its frame on this machine, measured in the same run as ranktop.

    .venv/bin/python bench/minimal_app.py          # run it (q quits)
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Static


class MinimalApp(App[None]):
    """A status line and a search box hidden until "/"."""

    BINDINGS = [Binding("slash", "search", "Search", id="minimal.search"),
                Binding("q", "quit", "Quit", id="minimal.quit")]
    AUTO_FOCUS = None  # the keys go to the app until "/" opens the box
    CSS = ".search { display: none; } .search.shown { display: block; }"

    def compose(self) -> ComposeResult:
        yield Static("ranks 0/0 up", id="status")
        yield Static("Search the ranks: a rank, a host or host:gpu", classes="search")
        yield Input(id="search", classes="search")

    def action_search(self) -> None:
        self.query(".search").add_class("shown")
        search = self.query_one("#search", Input)
        search.value = ""
        search.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query(".search").remove_class("shown")
        self.query_one("#status", Static).update(f"rank {event.value} gpu-node-000 GPU 0")
        self.set_focus(None)


if __name__ == "__main__":
    MinimalApp().run()
