"""What the headless benchmarks share: the bytes each update sends to the terminal, the
heatmap rows drawn afresh, and the demo app on a fake clock.

Not a benchmark of its own: ``render.py``, ``refresh_bytes.py``, ``ui_poll.py`` and
``scale.py`` import it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def set_colour_system(color_system: str) -> None:
    """Textual reads it when imported, and caches each style's escape codes for the first
    colour system it meets: call this first, once per process."""
    os.environ["TEXTUAL_COLOR_SYSTEM"] = color_system


class TerminalBytes:
    """Counts the bytes of every update the app hands to its terminal driver: the exact
    bytes a terminal would get, apart from the synchronized-output markers (16 bytes)."""

    def __init__(self, app) -> None:
        from rich.control import Control
        from textual._compositor import CompositorUpdate

        self.sent: list[int] = []
        self._app = app
        self._display = app._display
        home = Control.move_to(0, 0).segment.text

        def capture(screen, renderable) -> None:
            if isinstance(renderable, CompositorUpdate):
                data = renderable.render_segments(app.console) + home
                self.sent.append(len(data.encode()))
            self._display(screen, renderable)

        app._display = capture

    def take(self) -> int:
        """The bytes sent since the last call."""
        total = sum(self.sent)
        self.sent.clear()
        return total

    def full_screen(self) -> int:
        """The bytes of the whole screen drawn at once (as after a resize)."""
        screen = self._app.screen
        update = screen._compositor.render_update(full=True,
                                                  screen_stack=self._app._background_screens)
        return len(update.render_segments(self._app.console).encode())


@contextmanager
def counting_rows() -> Iterator[list[int]]:
    """Within it, the list holds the row of every heatmap row drawn afresh (row-cache
    misses, every map)."""
    from ranktop.widgets.heatmap import Heatmap

    drawn: list[int] = []
    draw_row = Heatmap._draw_row

    def counting(self, y: int):
        drawn.append(y)
        return draw_row(self, y)

    Heatmap._draw_row = counting
    try:
        yield drawn
    finally:
        Heatmap._draw_row = draw_row


def demo_app(at: float, nodes: int, gpus: int = 8, color_system: str = "256"):
    """The demo at ``at`` seconds into its scenario, polled by the caller, on a fake clock
    (``app.clock.now``)."""
    from tests.tui.conftest import make_app

    return make_app(at=at, nodes=nodes, gpus=gpus, color_system=color_system)
