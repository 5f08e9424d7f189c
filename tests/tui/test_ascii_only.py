"""A terminal whose locale is not UTF-8 gets ASCII only: boxes, maps, marks and text."""

from __future__ import annotations

import asyncio

import pytest
from ranktop.tui.screens.help import HelpScreen
from ranktop.tui.screens.rank import RankScreen
from ranktop.widgets.heatmap import Heatmap

from tests.tui.conftest import START, make_app, screen_text


def not_ascii(text: str) -> set[str]:
    return {char for char in text if not char.isascii()}


async def polled(app, pilot, until: float) -> None:
    for at in range(26, int(until) + 1, 2):
        app.clock.now = START + at
        await app.poll_once()
        await asyncio.to_thread(app.engine.source.flush_logs)
    await pilot.pause()


@pytest.mark.parametrize("no_color", [False, True])
async def test_cluster_rank_and_help_screens_draw_only_ascii(tmp_path, monkeypatch, no_color):
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(at=40.0, log_root=tmp_path / "logs", ascii_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await polled(app, pilot, 40.0)
        cluster = screen_text(app)
        assert not not_ascii(cluster)
        assert "+-" in cluster and "rank 37" in cluster and "enter Rank" in cluster
        maps = list(app.screen.query(Heatmap))
        assert maps and all(m.layout_grid.cells_per_row == 1 for m in maps)  # no half-blocks
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        await pilot.press(*"rank 3")
        await pilot.pause(0.5)
        palette = screen_text(app)
        assert not not_ascii(palette) and ">  rank 3" in palette  # its search icon, in ASCII
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert isinstance(app.screen, RankScreen)
        assert not not_ascii(screen_text(app))
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert not not_ascii(screen_text(app))


async def test_a_utf8_locale_keeps_the_unicode_look():
    app = make_app(at=40.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await polled(app, pilot, 40.0)
        assert {"╭", "▀"} <= not_ascii(screen_text(app))
        assert any(m.layout_grid.cells_per_row == 2 for m in app.screen.query(Heatmap))
