"""A rank's log tail: coloured by kind, bounded, following the end unless the user scrolls.

Lines arrive already made safe for the terminal (no control characters); this widget only
draws them. ``w`` shows warnings and errors only, ``/`` highlights a search, ``f`` toggles
following, ``g`` / ``G`` go to the top / bottom.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

SERIOUS = frozenset({"nccl_warn", "watchdog", "net", "error"})
MAX_LINES = 5000


class LogView(ScrollView, can_focus=True):
    """Lines of (kind, text)."""

    BINDING_GROUP_TITLE = "Log"

    BINDINGS = [
        Binding("w", "toggle_serious", "Warnings", id="log.warnings",
                tooltip="Show only warnings and errors, or every line"),
        Binding("f", "toggle_follow", "Follow", id="log.follow",
                tooltip="Follow the end of the log, or stay where you are"),
        Binding("g", "top", "Top", id="log.top", tooltip="Go to the first line"),
        Binding("G", "bottom", "Bottom", id="log.bottom", tooltip="Go to the last line"),
        Binding("up,k", "scroll_up", "Up", show=False, id="log.up"),
        Binding("down,j", "scroll_down", "Down", show=False, id="log.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="log.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="log.page_down"),
    ]

    DEFAULT_CSS = """
    LogView { height: 1fr; }
    """
    COMPONENT_CLASSES = {
        "log-view--nccl-warn",  # a line of each kind (tui/logs/text.py); plain lines: none
        "log-view--watchdog",
        "log-view--net",
        "log-view--error",
        "log-view--nccl-info",
        "log-view--match",  # the search text, over its line's style
    }

    following = var(True, init=False)
    """Whether the view keeps to the last line as lines arrive."""
    serious_only = var(False, init=False)
    """Whether only warnings and errors are shown."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: deque[tuple[str, str]] = deque(maxlen=MAX_LINES)
        self.search = ""
        self._shown: list[tuple[str, str]] = []

    # -- what the screen calls ---------------------------------------------------------

    def add(self, lines: Iterable[tuple[str, str]]) -> None:
        """Append (kind, text) lines; the view follows the end if it is following."""
        before = len(self.lines)
        self.lines.extend(lines)
        if len(self.lines) != before or before == MAX_LINES:
            self._reshow()

    def set_search(self, text: str) -> int:
        """Highlight ``text`` and go to its last occurrence; the number of matching lines."""
        self.search = text
        matches = [i for i, (_, line) in enumerate(self._shown) if text and text in line]
        if matches:
            self.following = False
            self.scroll_to(y=max(0, matches[-1] - self.size.height // 2), animate=False)
        self.refresh()
        return len(matches)

    # -- actions -----------------------------------------------------------------------

    def action_toggle_serious(self) -> None:
        self.serious_only = not self.serious_only

    def action_toggle_follow(self) -> None:
        self.following = not self.following

    def watch_serious_only(self) -> None:
        self._reshow()

    def watch_following(self) -> None:
        if self.following:
            self.scroll_end(animate=False)

    def action_top(self) -> None:
        self.following = False
        self.scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.following = True
        self.scroll_end(animate=False)

    def action_scroll_up(self) -> None:
        self.following = False
        self.scroll_relative(y=-1, animate=False)

    def action_page_up(self) -> None:
        self.following = False
        super().action_page_up()

    # -- drawing -----------------------------------------------------------------------

    def _style(self, part: str) -> Style:
        return self.get_component_rich_style(f"log-view--{part}", partial=True, default=Style())

    def _reshow(self) -> None:
        lines = self.lines
        self._shown = [ln for ln in lines if ln[0] in SERIOUS] if self.serious_only else list(lines)
        width = max((len(text) for _, text in self._shown), default=0)
        self.virtual_size = Size(width, len(self._shown))
        self.refresh()
        if self.following:
            self.scroll_end(animate=False)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        if index >= len(self._shown):
            return Strip.blank(width, self.rich_style)
        kind, text = self._shown[index]
        style = self._style(kind.replace("_", "-"))
        segments = list(_highlighted(text, self.search, style, self._style("match")))
        strip = Strip(segments).crop_extend(scroll_x, scroll_x + width, self.rich_style)
        return strip.apply_style(self.rich_style)


def _highlighted(text: str, search: str, style: Style, match: Style) -> Iterable[Segment]:
    if not search or search not in text:
        yield Segment(text, style)
        return
    start = 0
    while (found := text.find(search, start)) >= 0:
        yield Segment(text[start:found], style)
        yield Segment(search, style + match)
        start = found + len(search)
    yield Segment(text[start:], style)
