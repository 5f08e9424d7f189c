"""A rank's log tail: coloured by kind, bounded, following the end unless the user scrolls.

Lines arrive already made safe for the terminal (no control characters); this widget only
draws them. ``w`` shows warnings and errors only, ``f`` toggles following, ``g`` / ``G`` go
to the top / bottom, ``W`` wraps long lines (else the arrows scroll sideways), ``o`` puts
before each line the name of the file it came from (where the screen gave one). A search
(set by the screen) highlights every match, smart-case as in less and vim (case matters
only when the search has a capital), and ``next_match`` steps through the matching lines.
Each change of these modes is posted as ``Changed``, for the screen to show them.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

SERIOUS = frozenset({"nccl_warn", "watchdog", "net", "error"})
MOMENT = "moment"  # the kind of the line that marks a past moment among the others
MAX_LINES = 5000


class LogView(ScrollView, can_focus=True):
    """Lines of (kind, text)."""

    BINDING_GROUP_TITLE = "Log"

    BINDINGS = [
        Binding("w", "toggle_serious", "Warnings", id="log.warnings",
                tooltip="Show only warnings and errors, or every line"),
        Binding("f", "toggle_follow", "Follow", id="log.follow",
                tooltip="Follow the end of the log, or stay where you are"),
        Binding("W", "toggle_wrap", "Wrap", id="log.wrap",
                tooltip="Wrap long lines, or keep one row a line (the arrows scroll sideways)"),
        Binding("o", "toggle_origin", "Files", show=False, id="log.origin",
                tooltip="Show which file each line came from, or hide it"),
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
        "log-view--origin",  # the name of a line's file, before it
        "log-view--moment",  # the line marking the moment shown, between the others
    }

    following = var(True, init=False)
    """Whether the view keeps to the last line as lines arrive."""
    serious_only = var(False, init=False)
    """Whether only warnings and errors are shown."""
    wrapping = var(False, init=False)
    """Whether a line longer than the view goes on in the rows below it."""
    show_origin = var(False, init=False)
    """Whether each line starts with the name of the file it came from."""

    class Changed(Message):
        """Following, the warnings-only filter, wrapping, the files or the search changed."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: deque[tuple[str, str]] = deque(maxlen=MAX_LINES)
        self.origins: deque[str] = deque(maxlen=MAX_LINES)  # each line's file, or ""
        self.search = ""
        self.matches: list[int] = []  # the shown lines that match the search
        self.current: int | None = None  # the index in ``matches`` last gone to
        self._pattern: re.Pattern[str] | None = None
        self._shown: list[tuple[str, str]] = []
        self._shown_origins: list[str] = []
        self._rows: list[tuple[int, int]] = []  # each row's shown line and its first cell
        self._first_row: list[int] = []  # each shown line's first row

    # -- what the screen calls ---------------------------------------------------------

    def add(self, lines: Iterable[tuple[str, str] | tuple[str, str, str]]) -> None:
        """Append (kind, text) or (kind, text, file) lines; the view follows the end if it
        is following."""
        before = len(self.lines)
        added = list(lines)[-MAX_LINES:]  # of a flood, only what the view can hold
        self.lines.extend((line[0], line[1]) for line in added)
        self.origins.extend(line[2] if len(line) > 2 else "" for line in added)
        if added or before == MAX_LINES:
            self._reshow()

    def mark_moment(self, before: int, text: str) -> None:
        """Put a line saying ``text`` before line ``before`` (the first written after the
        moment shown; the number of lines: after them all), show it mid-view and stop
        following: the log as it stood then, what came after below it."""
        self._unmark()
        before = max(0, min(before, len(self.lines)))
        if len(self.lines) == MAX_LINES:  # the mark must not push a line out of the middle
            self.lines.popleft()
            self.origins.popleft()
            before = max(0, before - 1)
        self.lines.insert(before, (MOMENT, text))
        self.origins.insert(before, "")
        self.following = False
        self._reshow()
        shown = next(i for i, (kind, _) in enumerate(self._shown) if kind == MOMENT)
        self.scroll_to(y=max(0, self._first_row[shown] - self.size.height // 2), animate=False)

    def clear_moment(self) -> None:
        """Take the moment's mark away and follow the end again."""
        if self._unmark():
            self._reshow()
        self.following = True

    def _unmark(self) -> bool:
        """Take out the moment's mark; whether there was one."""
        for index, (kind, _) in enumerate(self.lines):
            if kind == MOMENT:
                del self.lines[index], self.origins[index]
                return True
        return False

    @property
    def unmarked(self) -> list[str]:
        """The lines' texts, without the moment's mark."""
        return [text for kind, text in self.lines if kind != MOMENT]

    def clear(self) -> None:
        """Forget every line."""
        self.lines.clear()
        self.origins.clear()
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
        row = self._first_row[self.matches[self.current]]
        self.scroll_to(y=max(0, row - self.size.height // 2), animate=False)
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

    def action_toggle_wrap(self) -> None:
        self.wrapping = not self.wrapping

    def action_toggle_origin(self) -> None:
        self.show_origin = not self.show_origin

    def watch_serious_only(self) -> None:
        self.current = None
        self._reshow()
        self.post_message(self.Changed())

    def watch_wrapping(self) -> None:
        self.scroll_to(x=0, animate=False)
        self._reshow()
        self.post_message(self.Changed())

    def watch_show_origin(self) -> None:
        self._reshow()
        self.post_message(self.Changed())

    def on_resize(self) -> None:
        if self.wrapping:
            self._reshow()

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
        if len(self.origins) != len(self.lines):  # lines changed without add() or clear()
            self.origins = deque([""] * len(self.lines), maxlen=MAX_LINES)
        kept = [(line, origin) for line, origin in zip(self.lines, self.origins, strict=True)
                if not self.serious_only or line[0] in SERIOUS or line[0] == MOMENT]
        self._shown = [line for line, _ in kept]
        self._shown_origins = [origin for _, origin in kept]
        self._find_matches()
        widest = self._lay_out()
        self.virtual_size = Size(widest, len(self._rows))
        self.refresh()
        if self.following:
            self.scroll_end(animate=False)

    def _lay_out(self) -> int:
        """Each line's rows (one, or as many as it needs when wrapping); the widest row."""
        wrap = self._wrap_width()
        self._rows, self._first_row = [], []
        widest = 0
        width_of = cell_len if wrap else len  # only wrapping needs exact cells (wide text)
        for index, (_, text) in enumerate(self._shown):
            cells = width_of(self._prefix(index)) + width_of(text)
            self._first_row.append(len(self._rows))
            count = max(1, -(-cells // wrap)) if wrap else 1
            self._rows.extend((index, part * (wrap or 0)) for part in range(count))
            widest = max(widest, min(cells, wrap) if wrap else cells)
        return widest

    def _wrap_width(self) -> int:
        """The row width lines wrap at (room left for a scrollbar); 0: no wrapping."""
        if not self.wrapping:
            return 0
        return max(self.size.width - self.styles.scrollbar_size_vertical, 0)

    def _prefix(self, index: int) -> str:
        origin = self._shown_origins[index] if self.show_origin else ""
        return f"{origin}: " if origin else ""

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.size.width
        if row >= len(self._rows):
            return Strip.blank(width, self.rich_style)
        index, start = self._rows[row]
        kind, text = self._shown[index]
        style = self._style(kind.replace("_", "-"))
        if self.current is not None and self.matches[self.current] == index:
            style += self._style("current")
        segments = [Segment(self._prefix(index), style + self._style("origin")),
                    *_highlighted(text, self._pattern, style, self._style("match"))]
        left = start if self.wrapping else scroll_x
        strip = Strip(segments).crop_extend(left, left + width, self.rich_style)
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
