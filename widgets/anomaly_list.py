"""A short list of what is wrong, most severe first, with one line highlighted.

It never takes focus: the arrows stay with the heatmaps; ``n`` / ``N`` (the screen's keys)
move the highlight, and a click selects a line.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widget import Widget


class AnomalyList(Widget):
    """Rows of (severity, text); ``current`` is the highlighted row."""

    DEFAULT_CSS = """
    AnomalyList { height: auto; max-height: 6; width: 1fr; }
    """
    COMPONENT_CLASSES = {
        "anomaly-list--critical",  # the severity of a row
        "anomaly-list--major",
        "anomaly-list--warning",
        "anomaly-list--quiet",  # "✓ no anomalies"
        "anomaly-list--current",  # the highlighted row, over its other styles
    }

    class Selected(Message):
        """A row was clicked."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: tuple[tuple[str, str], ...] = ()
        self.current: int | None = None
        self.first = 0  # the first row shown, so the highlighted one stays in view

    def set_rows(self, rows: Sequence[tuple[str, str]], current: int | None) -> None:
        rows = tuple(rows)
        if (rows, current) == (self.rows, self.current):
            return
        resized = len(rows) != len(self.rows)
        self.rows, self.current = rows, current
        self.refresh(layout=resized)

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, len(self.rows))

    def render(self) -> Text:
        if not self.rows:
            return Text("✓ no anomalies", self._style("quiet"), no_wrap=True)
        height = max(1, self.size.height)
        if self.current is not None:
            if self.current < self.first:
                self.first = self.current
            elif self.current >= self.first + height:
                self.first = self.current - height + 1
        self.first = min(self.first, max(0, len(self.rows) - height))
        text = Text(no_wrap=True, overflow="ellipsis")
        for index in range(self.first, min(len(self.rows), self.first + height)):
            severity, line = self.rows[index]
            mark = "▶" if index == self.current else " "
            style = self._style("current") if index == self.current else Style()
            if index > self.first:
                text.append("\n")
            text.append(f"{mark}● {severity:<8} ", self._style(severity) + style)
            text.append(line, style)
        return text

    def _style(self, part: str) -> Style:
        return self.get_component_rich_style(f"anomaly-list--{part}", partial=True,
                                             default=Style())

    def on_click(self, event: events.Click) -> None:
        index = self.first + event.y
        if 0 <= index < len(self.rows):
            self.post_message(self.Selected(index))
