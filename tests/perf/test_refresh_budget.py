"""The SSH budget, as ratios measured in one run: a refresh sends a small part of a screen
and repaints a small part of each map. Bytes and row counts, not timings, so the shared
machine's noise cannot fail it (bench/render.py prints the timings)."""

from __future__ import annotations

from statistics import mean

from ranktop.widgets.heatmap import Heatmap
from ranktop.widgets.panel import MetricPanel
from rich.control import Control
from textual._compositor import CompositorUpdate

from tests.tui.conftest import make_app

TICKS = 10


async def test_a_refresh_sends_far_less_than_a_screen_and_redraws_few_rows(monkeypatch):
    drawn: list[int] = []
    draw_row = Heatmap._draw_row

    def counting_draw_row(self, y):
        drawn.append(y)
        return draw_row(self, y)

    monkeypatch.setattr(Heatmap, "_draw_row", counting_draw_row)
    app = make_app(at=0.0)
    sent: list[int] = []
    async with app.run_test(size=(120, 40)) as pilot:
        console, display = app.console, app._display

        def capture(screen, renderable) -> None:
            if isinstance(renderable, CompositorUpdate):
                text = renderable.render_segments(console) + Control.move_to(0, 0).segment.text
                sent.append(len(text.encode()))
            display(screen, renderable)

        await pilot.pause()
        app._display = capture
        await app.poll_once()
        await pilot.pause(0.1)
        map_rows = app.screen.query_one("#map-0", MetricPanel).heatmap.layout_grid.rows
        tick_bytes, tick_rows = [], []
        for _ in range(TICKS):
            sent.clear()
            drawn.clear()
            app.clock.now += 2
            await app.poll_once()
            await pilot.pause()
            tick_bytes.append(sum(sent))
            tick_rows.append(len(drawn))
        update = app.screen._compositor.render_update(full=True,
                                                      screen_stack=app._background_screens)
        screen_bytes = len(update.render_segments(console).encode())

    assert screen_bytes > 10_000  # the measurement saw a real screen
    assert mean(tick_bytes) < 0.35 * screen_bytes
    assert mean(tick_rows) < 0.5 * 4 * map_rows
