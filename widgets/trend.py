"""A metric's recent values as a row of eighth-blocks, with the job's median beneath.

Both rows share one scale, so a rank running hotter or slower than the job reads at a glance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

BLOCKS = " ▁▂▃▄▅▆▇█"
LABEL_WIDTH = 32


class Trend(Widget):
    """Two rows: ``label  value  ▁▂▅▇`` for the rank and ``median  ▁▁▂▂`` for the job; one
    row, the median as a number, when the widget is given one line."""

    DEFAULT_CSS = """
    Trend { height: 2; width: 1fr; }
    """
    COMPONENT_CLASSES = {
        "trend--label",  # the metric's name
        "trend--value",  # the rank's value now
        "trend--rank",  # the rank's blocks
        "trend--median",  # the job's median: its value and blocks
    }

    def __init__(self, label: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label
        self.value_text = ""
        self.median_text = ""
        self.values: tuple[float, ...] = ()
        self.medians: tuple[float, ...] = ()

    def show(self, value_text: str, median_text: str, values: Sequence[float],
             medians: Sequence[float]) -> None:
        self.value_text, self.median_text = value_text, median_text
        self.values, self.medians = tuple(values), tuple(medians)
        self.refresh()

    def render(self) -> Text:
        if self.size.height < 2:  # a short terminal: the median as a number only
            return self._one_row()
        width = max(0, self.size.width - LABEL_WIDTH - 1)
        values, medians = self.values[-width:], self.medians[-width:]
        low, high = _range((*values, *medians))
        style = self._style
        text = Text(no_wrap=True, overflow="crop")
        text.append(f"{self.label:<18.18}", style("label"))
        text.append(f"{self.value_text:>12}  ", style("value"))
        text.append(_blocks(values, low, high), style("rank"))
        text.append("\n")
        text.append(f"{'  job median':<18}{self.median_text:>12}  ", style("median"))
        text.append(_blocks(medians, low, high), style("median"))
        return text

    def _one_row(self) -> Text:
        """``label  value  median 66%  ▁▂▅▇``: the rank's blocks on the shared scale."""
        median = f"  median {self.median_text:<10}"
        width = max(0, self.size.width - LABEL_WIDTH - len(median) - 1)
        values = self.values[-width:] if width else ()
        medians = self.medians[-width:] if width else ()
        low, high = _range((*values, *medians))
        style = self._style
        text = Text(no_wrap=True, overflow="crop")
        text.append(f"{self.label:<18.18}", style("label"))
        text.append(f"{self.value_text:>12}", style("value"))
        text.append(median, style("median"))
        text.append("  ")
        text.append(_blocks(values, low, high), style("rank"))
        return text

    def _style(self, part: str) -> Style:
        return self.get_component_rich_style(f"trend--{part}", partial=True)


def _range(values: Sequence[float]) -> tuple[float, float]:
    present = [v for v in values if v == v]
    return (min(present), max(present)) if present else (0.0, 1.0)


def _blocks(values: Sequence[float], low: float, high: float) -> str:
    span = high - low
    flat = not 0 < span < math.inf  # one value, or values no float spans: drawn level
    chars = []
    for value in values:
        if value != value:
            chars.append("·")
            continue
        share = 0.5 if flat else (value - low) / span
        chars.append(BLOCKS[1 + min(7, int(share * 8))])
    return "".join(chars)
