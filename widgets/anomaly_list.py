"""What is wrong, one line per row, most severe first, with one line highlighted (the
cluster screen gives a row per root cause, what it explains named on the same line).

Nothing active is ever hidden: each row takes exactly one line (cut with … when long;
the details are in the status line and the rank screen). Given a fixed height (the cluster
screen reserves one, so that a change in the count never lays the maps out again) or a
maximum one, it scrolls when the rows do not fit, saying how many more lie above and below
and how severe those below are. The
highlighted line is always in view. It never takes focus: the arrows stay with the
heatmaps; ``n`` / ``N`` (the screen's keys) move the highlight, and a click selects a line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widget import Widget

SEVERITIES = ("critical", "major", "warning")


class Row(NamedTuple):
    severity: str
    text: str
    pending: bool = False


class AnomalyList(Widget):
    """Rows of anomalies; ``current`` is the highlighted row; ``empty`` what to say when
    there are none ("✓ no anomalies", "checking…", "source down: …")."""

    DEFAULT_CSS = """
    AnomalyList { height: auto; width: 1fr; }
    """
    COMPONENT_CLASSES = {
        "anomaly-list--critical",  # the severity of a row
        "anomaly-list--major",
        "anomaly-list--warning",
        "anomaly-list--pending",  # a condition not yet confirmed
        "anomaly-list--quiet",  # "✓ no anomalies"
        "anomaly-list--note",  # "checking…", "+3 more below"
        "anomaly-list--current",  # the highlighted row, over its other styles
    }

    class Selected(Message):
        """A row was clicked."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: tuple[Row, ...] = ()
        self.current: int | None = None
        self.empty: tuple[str, bool] = ("", False)  # (text, is it good news): none until told
        self.first = 0  # the first row shown

    def set_rows(self, rows: Sequence[Row], current: int | None,
                 empty: tuple[str, bool]) -> None:
        rows = tuple(Row(*row) for row in rows)
        if (rows, current, empty) == (self.rows, self.current, self.empty):
            return
        height = self.styles.height
        grows = height is None or height.is_auto  # its height follows the row count
        resized = grows and len(rows) != len(self.rows)
        self.rows, self.current, self.empty = rows, current, empty
        self.refresh(layout=resized)

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, len(self.rows))

    def visible(self, height: int) -> tuple[int, int]:
        """(first, last + 1) of the rows shown in ``height`` lines, the current one among
        them; a line is kept for "+N more" when not all fit."""
        count = len(self.rows)
        if count <= height:
            return 0, count
        room = max(1, height - 1)
        if self.current is not None:
            if self.current < self.first:
                self.first = self.current
            elif self.current >= self.first + room:
                self.first = self.current - room + 1
        self.first = max(0, min(self.first, count - room))
        return self.first, self.first + room

    def render(self) -> Text:
        if not self.rows:
            text, good = self.empty
            return Text(text, self._style("quiet" if good else "note"), no_wrap=True,
                        overflow="ellipsis")
        width = max(1, self.size.width)
        start, stop = self.visible(max(1, self.size.height))
        out = Text(no_wrap=True, overflow="ellipsis")
        for index in range(start, stop):
            if index > start:
                out.append("\n")
            out.append_text(self._line(index, width))
        hidden_above, hidden_below = start, len(self.rows) - stop
        if hidden_above or hidden_below:
            out.append("\n")
            out.append(_more(hidden_above, hidden_below, self.rows[stop:]), self._style("note"))
        return out

    def _line(self, index: int, width: int) -> Text:
        row = self.rows[index]
        chosen = index == self.current
        extra = self._style("current") if chosen else Style()
        mark = "▶" if chosen else " "
        line = Text(no_wrap=True, overflow="ellipsis")
        if row.pending:
            pending = self._style("pending")
            line.append(f"{mark}◌ pending  ", pending + extra)
            line.append(row.text, pending + extra)
        else:
            line.append(f"{mark}● {row.severity:<8} ", self._style(row.severity) + extra)
            line.append(row.text, extra)
        line.truncate(width, overflow="ellipsis")
        return line

    def _style(self, part: str) -> Style:
        return self.get_component_rich_style(f"anomaly-list--{part}", partial=True,
                                             default=Style())

    def on_click(self, event: events.Click) -> None:
        start, stop = self.visible(max(1, self.size.height))
        index = start + event.y
        if start <= index < stop:
            self.post_message(self.Selected(index))


def _more(above: int, below: int, rest: Sequence[Row]) -> str:
    """"+3 more below (1 critical): n / N to scroll", and how many are above."""
    parts = []
    if below:
        worst = [r.severity for r in rest if not r.pending]
        counts = {s: worst.count(s) for s in SEVERITIES if worst.count(s)}
        detail = ", ".join(f"{n} {s}" for s, n in counts.items())
        parts.append(f"+{below} more below" + (f" ({detail})" if detail else ""))
    if above:
        parts.append(f"{above} above")
    return " · ".join(parts) + ": n / N to scroll"
