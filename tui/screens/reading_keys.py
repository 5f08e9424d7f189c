"""The keys that read a long screen, the same on each (as in less and k9s): ``j`` / ``k``
(and the arrows) one line down / up, ``g`` / ``G`` (and Home / End) the top / the bottom.

A screen mixes in ``Reading``, names its scrolling box in ``READ_BOX`` and adds
``reading_bindings`` with its own id prefix (the keymap's ids: ``help.down``, …).
"""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import VerticalScroll


def reading_bindings(prefix: str, show_edges: bool = False) -> list[Binding]:
    """j k g G for a screen whose binding ids begin with ``prefix``; ``show_edges``: Top and
    Bottom in its footer."""
    return [
        Binding("down,j", "scroll(1)", "Down", show=False, id=f"{prefix}.down"),
        Binding("up,k", "scroll(-1)", "Up", show=False, id=f"{prefix}.up"),
        Binding("home,g", "edge(0)", "Top", show=show_edges, id=f"{prefix}.top",
                tooltip="Go to the first line"),
        Binding("end,G", "edge(1)", "Bottom", show=show_edges, id=f"{prefix}.bottom",
                tooltip="Go to the last line"),
    ]


class Reading:
    """The actions of ``reading_bindings`` on the box ``READ_BOX`` names (its id), mixed
    into a screen (not a screen itself: the keymap walks every screen class)."""

    READ_BOX = ""

    def read_box(self) -> VerticalScroll:
        return self.query_one(f"#{self.READ_BOX}", VerticalScroll)  # type: ignore[attr-defined]

    def action_scroll(self, lines: int) -> None:
        self.read_box().scroll_relative(y=lines, animate=False)

    def action_edge(self, bottom: int) -> None:
        box = self.read_box()
        (box.scroll_end if bottom else box.scroll_home)(animate=False)
