"""A rank's log tail: coloured by kind, bounded, following the end unless the user scrolls.

Lines arrive already made safe for the terminal (no control characters); this widget only
draws them. ``w`` shows warnings and errors only, ``f`` toggles following, ``g`` / ``G`` go
to the top / bottom. A search (set by the screen) highlights every match, smart-case as in
less and vim (case matters only when the search has a capital), and ``next_match`` steps
through the matching lines. Each change of these modes is posted as ``Changed``, for the
screen to show them.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
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
        "log-view--nccl-warn",  # a line of each kind (tui/core/text.py); plain lines: none
        "log-view--watchdog",
        "log-view--net",
        "log-view--error",
        "log-view--nccl-info",
        "log-view--match",  # the search text, over its line's style
        "log-view--current",  # the line of the match ``next_match`` went to
    }

    following = var(True, init=False)
    """Whether the view keeps to the last line as lines arrive."""
    serious_only = var(False, init=False)
    """Whether only warnings and errors are shown."""

    class Changed(Message):
        """Following, the warnings-only filter or the search changed."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: deque[tuple[str, str]] = deque(maxlen=MAX_LINES)
        self.search = ""
        self.matches: list[int] = []  # the shown lines that match the search
        self.current: int | None = None  # the index in ``matches`` last gone to
        self._pattern: re.Pattern[str] | None = None
        self._shown: list[tuple[str, str]] = []

    # -- what the screen calls ---------------------------------------------------------

    def add(self, lines: Iterable[tuple[str, str]]) -> None:
        """Append (kind, text) lines; the view follows the end if it is following."""
        before = len(self.lines)
        self.lines.extend(lines)
        if len(self.lines) != before or before == MAX_LINES:
            self._reshow()

    def set_search(self, text: str) -> int:
        """Highlight ``text`` (no text: no search) and go to its last match, the newest;
        the number of matching lines."""
        self.search = text
        self._pattern = smart_case(text)
        self._find_matches()
        self.current = None
        if self.matches:
            self.next_match(-1)
        self.refresh()
        self.post_message(self.Changed())
        return len(self.matches)

    def next_match(self, step: int) -> None:
        """Go to the next (1) or previous (-1) matching line, round the ends."""
        if not self.matches:
            return
        if self.current is None:
            self.current = 0 if step > 0 else len(self.matches) - 1
        else:
            self.current = (self.current + step) % len(self.matches)
        self.following = False
        line = self.matches[self.current]
        self.scroll_to(y=max(0, line - self.size.height // 2), animate=False)
        self.refresh()
        self.post_message(self.Changed())

    def _find_matches(self) -> None:
        pattern = self._pattern
        self.matches = ([] if pattern is None else
                        [i for i, (_, line) in enumerate(self._shown) if pattern.search(line)])
        if self.current is not None and self.current >= len(self.matches):
            self.current = len(self.matches) - 1 if self.matches else None

    # -- actions -----------------------------------------------------------------------

    def action_toggle_serious(self) -> None:
        self.serious_only = not self.serious_only

    def action_toggle_follow(self) -> None:
        self.following = not self.following

    def watch_serious_only(self) -> None:
        self.current = None
        self._reshow()
        self.post_message(self.Changed())

    def watch_following(self) -> None:
        if self.following:
            self.scroll_end(animate=False)
        self.post_message(self.Changed())

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
        self._find_matches()
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
        if self.current is not None and self.matches[self.current] == index:
            style += self._style("current")
        segments = list(_highlighted(text, self._pattern, style, self._style("match")))
        strip = Strip(segments).crop_extend(scroll_x, scroll_x + width, self.rich_style)
        return strip.apply_style(self.rich_style)


def smart_case(text: str) -> re.Pattern[str] | None:
    """The search for ``text``, taken literally: any case unless it has a capital."""
    if not text:
        return None
    flags = 0 if any(c.isupper() for c in text) else re.IGNORECASE
    return re.compile(re.escape(text), flags)


def _highlighted(text: str, pattern: re.Pattern[str] | None, style: Style,
                 match: Style) -> Iterable[Segment]:
    start = 0
    for found in pattern.finditer(text) if pattern is not None else ():
        yield Segment(text[start:found.start()], style)
        yield Segment(found.group(), style + match)
        start = found.end()
    yield Segment(text[start:], style)
