"""Below the size a screen needs, it says so, and what size that is, instead of drawing
empty boxes: its panels are hidden (tui/app/ranktop.tcss, ``.-too-small``) and this line shows,
with the footer, so the keys that leave stay in view."""

from __future__ import annotations

from textual.geometry import Size
from textual.screen import Screen
from textual.widgets import Static


class TooSmall(Static):
    """What a screen shows while the terminal is smaller than it needs."""

    def __init__(self, what: str, needs: tuple[int, int]) -> None:
        super().__init__(classes="too-small")
        self.what = what
        self.needs = needs

    def check(self, screen: Screen, size: Size) -> bool:
        """Hide ``screen``'s panels and explain, or show them again; whether it is too small."""
        width, height = self.needs
        small = size.width < width or size.height < height
        screen.set_class(small, "-too-small")
        if small:
            self.update(f"The {self.what} needs a terminal of at least {width}x{height} "
                        f"(this one is {size.width}x{size.height}). Enlarge the window or "
                        "the pane.")
        return small
