"""The colour key under a heatmap: the scale from its low to its high value, and "no data"."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from widgets import palette

SWATCH = "█"


class Legend(Widget):
    """One line: ``low ████████ high  █ no data  █ selected``."""

    DEFAULT_CSS = """
    Legend { height: 1; width: 1fr; }
    """

    def __init__(self, bad: str, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.bad = bad
        self.low_text = ""
        self.high_text = ""

    def set_scale(self, low_text: str, high_text: str) -> None:
        """Label the ends of the scale."""
        if (low_text, high_text) != (self.low_text, self.high_text):
            self.low_text, self.high_text = low_text, high_text
            self.refresh()

    def render(self) -> Text:
        """The scale, then as many of the keys for "no data" and the cursor as fit."""
        levels = range(palette.LEVELS)
        ordered = list(reversed(levels)) if self.bad == "low" else list(levels)
        text = Text(no_wrap=True, overflow="crop")
        text.append(f"{self.low_text} ")
        if self.app.no_color:
            text.append("".join(palette.glyph(level) for level in ordered), Style(underline=True))
            text.append(f" {self.high_text}")
            keys = [(palette.MISSING_GLYPH, Style(), "no data")]
        else:
            for level in ordered:
                text.append(SWATCH, Style(color=_color(level)))
            text.append(f" {self.high_text}")
            keys = [(SWATCH, Style(color=_color(palette.MISSING)), "no data"),
                    ("◆", Style(color="color(231)", bgcolor=_color(palette.CURSOR)), "selected")]
        for mark, style, words in keys:
            if text.cell_len + len(words) + 4 > self.size.width:
                break
            text.append("  ")
            text.append(mark, style)
            text.append(f" {words}")
        return text


def _color(level: int) -> str:
    return f"color({palette.color_number(level)})"
