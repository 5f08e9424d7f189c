"""The footer of keys, with the ones nobody may lose first: a narrow terminal cuts the
footer from its right end, so help, quit and back come before the rest, and below
``ROOMY`` columns the keys sit closer and the command palette's key (listed in help) goes.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

ROOMY = 100  # columns from which the footer has room for the spacious layout


class KeyFooter(Footer):
    """A Footer whose keys for the actions in ``first`` lead, in that order."""

    def __init__(self, first: Sequence[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.first = tuple(first)

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        if not all(isinstance(key, FooterKey) for key in keys):
            yield from keys  # grouped keys: Textual's own order
            return
        rest = len(self.first)
        yield from sorted(keys, key=lambda key: (
            self.first.index(key.action) if key.action in self.first else rest))

    def on_resize(self, event: events.Resize) -> None:
        roomy = event.size.width >= ROOMY
        self.compact = not roomy
        if roomy != self.show_command_palette:
            self.show_command_palette = roomy
            self.call_after_refresh(self.recompose)
