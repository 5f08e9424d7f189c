"""The footer of keys, with the ones nobody may lose first: a narrow terminal cuts the
footer from its right end, so help, quit and back come before the rest, and below
``ROOMY`` columns the keys sit closer and the command palette's key (listed in help) goes.

Textual's footer builds its keys anew whenever the screen's bindings may have changed (a
screen pushed over it or popped, the focus moved), and each rebuild lays the whole screen
out again: this one rebuilds only when the keys it shows did change.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

ROOMY = 100  # columns from which the footer has room for the spacious layout


class KeyFooter(Footer):
    """A Footer whose keys for the actions in ``first`` lead, in that order."""

    def __init__(self, first: Sequence[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.first = tuple(first)
        self._shown: tuple | None = None  # what the keys were built from, last time

    def bindings_changed(self, screen: Screen) -> None:
        if self._shown is not None and self._showing(screen) == self._shown:
            return
        super().bindings_changed(screen)

    def _showing(self, screen: Screen) -> tuple:
        """What the footer would show: every shown key, its action, words and state."""
        keys = tuple((key, b.action, b.description, enabled)
                     for key, (_, b, enabled, _) in screen.active_bindings.items() if b.show)
        return (*keys, self.compact, self.show_command_palette)

    def on_mount(self) -> None:
        # The screen may have announced its bindings before this footer was there to hear
        # (a screen that mounts slowly, as against Prometheus): ask for them once mounted.
        # (Textual runs Footer.on_mount too, which subscribes to later announcements.)
        self.call_after_refresh(self.bindings_changed, self.screen)

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._shown = self._showing(self.screen)
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
