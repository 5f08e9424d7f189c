"""A metric's recent values as a row of eighth-blocks, with the job's median beneath.

Both rows share one scale, so a rank running hotter or slower than the job reads at a glance.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

BLOCKS = " ▁▂▃▄▅▆▇█"
RANK_STYLE = Style(color="color(45)")
MEDIAN_STYLE = Style(color="color(244)")
LABEL_WIDTH = 32


class Trend(Widget):
    """Two rows: ``label  value  ▁▂▅▇`` for the rank and ``median  ▁▁▂▂`` for the job."""

    DEFAULT_CSS = """
    Trend { height: 2; width: 1fr; }
    """

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
        width = max(0, self.size.width - LABEL_WIDTH - 1)
        values, medians = self.values[-width:], self.medians[-width:]
        present = [v for v in (*values, *medians) if v == v]
        low, high = (min(present), max(present)) if present else (0.0, 1.0)
        text = Text(no_wrap=True, overflow="crop")
        text.append(f"{self.label:<18.18}", Style(bold=True))
        text.append(f"{self.value_text:>12}  ", RANK_STYLE + Style(bold=True))
        text.append(_blocks(values, low, high), RANK_STYLE)
        text.append("\n")
        text.append(f"{'  job median':<18}{self.median_text:>12}  ", MEDIAN_STYLE)
        text.append(_blocks(medians, low, high), MEDIAN_STYLE)
        return text


def _blocks(values: Sequence[float], low: float, high: float) -> str:
    span = high - low
    chars = []
    for value in values:
        if value != value:
            chars.append("·")
            continue
        share = (value - low) / span if span > 0 else 0.5
        chars.append(BLOCKS[1 + min(7, int(share * 8))])
    return "".join(chars)
