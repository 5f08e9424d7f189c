"""The line under a heatmap: its colour scale, the keys for "no data" and the cursor, and the
job's min / median / max on the right.

It is one line of its own so that a new summary every poll repaints this line only, not the
map above it.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from . import palette
from .heatmap import CURSOR_MARK

SWATCH = "█"


class Legend(Widget):
    """``low ████████ high  █ no data  ◆ selected      min 85% · med 88% · max 91%``; the
    swatches in the colours of the heatmap's palette for the terminal's colour system."""

    DEFAULT_CSS = """
    Legend { height: 1; width: 1fr; }
    """
    # The swatches are not here: they are drawn from the heatmap's palette (widgets/palette.py).
    COMPONENT_CLASSES = {
        "legend--summary",  # min / median / max
        "legend--glyphs",  # the scale drawn as glyphs, without colour
    }

    def __init__(self, bad: str, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.bad = bad
        self.ends = ("", "")
        self.summaries: tuple[str, ...] = ()
        self.show_stale = False  # the key for stale cells, once a source can mark them
        self.stale_words = "stale"  # what the key says of them

    def set_scale(self, low_text: str, high_text: str) -> None:
        """Label the ends of the scale."""
        if (low_text, high_text) != self.ends:
            self.ends = (low_text, high_text)
            self.refresh()

    def set_stale_key(self, shown: bool, words: str = "stale") -> None:
        """Explain the stale colour while some cells are stale (or not answered: ``words``
        say which)."""
        if (shown, words) != (self.show_stale, self.stale_words):
            self.show_stale, self.stale_words = shown, words
            self.refresh()

    def set_summary(self, *choices: str) -> None:
        """The summary, as alternatives from longest to shortest; the first that fits shows."""
        if choices != self.summaries:
            self.summaries = choices
            self.refresh()

    def render(self) -> Text:
        width = self.size.width
        text = self._scale()
        summary = next((s for s in self.summaries if text.cell_len + len(s) + 2 <= width), "")
        room = width - len(summary) - 2 if summary else width
        for mark, style, words in self._keys():
            if text.cell_len + len(words) + len(mark) + 3 > room:
                break
            text.append("  ")
            text.append(mark, style)
            text.append(f" {words}")
        if summary:
            text.append(" " * max(2, width - text.cell_len - len(summary)))
            text.append(summary, self.get_component_rich_style("legend--summary", partial=True))
        text.no_wrap, text.overflow = True, "crop"
        return text

    def _scale(self) -> Text:
        levels = range(palette.LEVELS)
        ordered = list(reversed(levels)) if self.bad == "low" else list(levels)
        low, high = self.ends
        text = Text(f"{low} ")
        if self._glyphs:
            text.append("".join(palette.glyph(level) for level in ordered),
                        self.get_component_rich_style("legend--glyphs", partial=True))
        else:
            colours = self._colours
            for level in ordered:
                text.append(SWATCH, Style(color=palette.color_of(colours, level)))
        text.append(f" {high}")
        return text

    def _keys(self) -> list[tuple[str, Style, str]]:
        if self._glyphs:
            stale = [(palette.STALE_GLYPH, Style(), self.stale_words)] if self.show_stale else []
            return [*stale, (palette.MISSING_GLYPH, Style(), "no data")]
        colours = self._colours
        keys = [(SWATCH, Style(color=colours.missing), "no data")]
        if self.show_stale:  # first, while there are stale cells to explain
            keys.insert(0, (SWATCH, Style(color=colours.stale), self.stale_words))
        cursor = palette.cursor_style(colours, palette.LEVELS - 1)
        return [*keys, (CURSOR_MARK, cursor, "selected")]

    @property
    def _glyphs(self) -> bool:
        return palette.without_colour(self.app)

    @property
    def _colours(self) -> palette.Colours:
        return palette.colours_for(self.app.console.color_system)
