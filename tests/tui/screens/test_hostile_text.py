"""Text from outside (an alert's summary, a log note, a file name) shown as itself: markup in
it is neither parsed (``[/]`` would crash) nor acted on (``@click`` would run an action)."""

from __future__ import annotations

from ranktop.tui.screens.rank import RankScreen
from textual.widgets import DataTable

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
