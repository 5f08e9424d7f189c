"""Text from outside (an alert's summary, a log note, a file name, a host label) shown as
itself: markup in it is neither parsed (``[/]`` would crash) nor acted on (``@click`` would
run an action)."""

from __future__ import annotations

from dataclasses import replace

from ranktop.tui.screens.rank import RankScreen
from ranktop.tui.simulator.cluster import SimCluster
from textual.command import CommandPalette
from textual.widgets import DataTable, OptionList

from tests.tui.conftest import make_app, screen_text

CLICK = "[@click=app.quit]Acknowledge[/]"
LINK = "[link=https://evil.example]docs[/link]"


async def open_rank(app, pilot) -> RankScreen:
    await app.poll_once()
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(app.screen, RankScreen)
    return app.screen


async def test_an_alert_summary_with_a_click_action_is_text_and_clicking_it_does_nothing():
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await open_rank(app, pilot)
        await pilot.pause(0.3)  # the screen's own alert load posts first
        row = ("12:00:00", "GpuHot", "firing", "", "alertmanager", CLICK)
        screen.post_message(RankScreen.Alerts(screen.rank, [row, (*row[:5], LINK)], "2 [/]"))
        await pilot.pause()
        text = screen_text(app)
        assert CLICK in text and LINK in text and "alerts: 2 [/]" in text
        table = screen.query_one("#rank-alerts", DataTable)
        cell = table.get_cell_at((0, 5))
        assert cell.plain == CLICK and not cell.spans  # no style, so no @click meta
        region = table.region
        for x in range(region.x, region.right, 4):  # click across the row's every column
            await pilot.click(offset=(x, region.y + 1))
        await pilot.pause()
        assert app.is_running and app.return_code is None
        assert not table.get_cell_at((1, 5)).spans  # no live link


async def test_a_log_note_naming_a_file_with_markup_is_text():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_rank(app, pilot)
        screen.post_message(RankScreen.LogLines(screen.rank, [("plain", "[/] line")],
                                                "/logs/[/x]rank0.log"))
        await pilot.pause()
        assert "· /logs/[/x]rank0.log" in screen_text(app)
        assert "[/] line" in screen_text(app)
        assert app.is_running


class MarkedHosts(SimCluster):
    """The demo's job of 32 ranks whose host labels end in markup, as a hostile exporter's
    labels can: ``gpu-node-000[/]``."""

    def __init__(self) -> None:
        super().__init__(4, 8, seed=7)
        marked = {host: f"{host}{HOST_MARKUP}" for host in self.rank_map.hosts}
        self.rank_map = replace(self.rank_map, hosts=tuple(marked.values()), ranks=tuple(
            replace(rank, host=marked[rank.host]) for rank in self.rank_map.ranks))


HOST_MARKUP = "[/][@click=app.quit]x[/][bold"


def offered(app) -> str:
    """The command palette's hits, as text."""
    hits = app.screen.query_one(OptionList)
    return "\n".join(str(hits.get_option_at_index(n).prompt) for n in range(hits.option_count))


async def test_host_labels_with_markup_are_text_on_the_incident_advice_and_rank_screens():
    """Through the real engine: ``i`` on rank 7's XID once crashed on ``[/]`` (MarkupError)."""
    app = make_app(at=172.0, cluster=MarkedHosts())
    async with app.run_test(size=(160, 50)) as pilot:
        for _ in range(3):
            await app.poll_once()
            app.clock.now += 2.0
        await pilot.pause()
        assert app.analysis.incidents
        app.cluster.select(app.analysis.incidents[0].root.rank or 0)
        for key in ("i", "a", "enter"):
            await pilot.press(key)
            await pilot.pause()
            assert f"gpu-node-000{HOST_MARKUP}" in screen_text(app), key
            await pilot.press("escape")
            await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette), app.screen
        await pilot.press(*"e-000", "down")
        await pilot.pause(0.3)
        assert f"go to rank 0 (gpu-node-000{HOST_MARKUP} GPU 0)" in offered(app)
        await pilot.press("escape")
        assert app.is_running and app.return_code is None
