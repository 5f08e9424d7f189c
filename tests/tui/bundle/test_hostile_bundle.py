"""A hostile bundle opened on every screen: its markup is shown as the characters it is
(never parsed: ``[/]`` would crash a screen, ``[@click=app.quit]`` would be a live action),
and the console keeps running whatever is clicked or hovered."""

from __future__ import annotations

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.bundle.opened import BundleEngine
from ranktop.tui.bundle.read import read_bundle
from ranktop.tui.screens.advice import AdviceScreen
from ranktop.tui.screens.evidence import EvidenceScreen
from ranktop.tui.screens.incident_detail import IncidentScreen
from ranktop.tui.screens.rank import RankScreen
from ranktop.tui.settings.config import load_settings
from textual.command import CommandPalette
from textual.content import Content

from tests.tui.bundle.hostile import MARKUP, SELECTED
from tests.tui.conftest import screen_text
from tests.tui.screens.test_dumps_on_demand import wait_for
from tests.tui.screens.test_hostile_text import offered

ACTION = "[@click=app.quit]x[/]"
INERT_HOST = "gpu-node-000\ufffd[2J\ufffd[H\ufffd]52;c;b3duZWQ=\ufffd"


async def click_the_action(app, pilot) -> None:
    """Click the ``x`` of the first ``[@click=app.quit]x[/]`` shown: were it markup, that
    would quit the console."""
    for row, line in enumerate(screen_text(app).splitlines()):
        column = line.find(ACTION)
        if column >= 0:
            await pilot.click(offset=(column + ACTION.index("]x") + 1, row))
            break
    await pilot.pause()
    assert app.is_running and app.return_code is None


async def shows_the_markup(app, pilot, screen: type, text: str = MARKUP) -> None:
    await pilot.pause()
    assert isinstance(app.screen, screen), type(app.screen)
    try:
        await wait_for(pilot, lambda: text in screen_text(app), tries=200)
    except AssertionError:
        raise AssertionError(screen_text(app)) from None

    await click_the_action(app, pilot)


async def test_every_screen_shows_a_hostile_bundles_markup_as_text(hostile_bundle):
    saved = read_bundle(hostile_bundle)
    app = RanktopApp(load_settings(), engine=BundleEngine(saved), poll=False,
                     bundle=saved.moment)
    app.cluster.cursor = saved.selected  # as `ranktop open` does
    assert saved.selected == SELECTED
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await shows_the_markup(app, pilot, type(app.cluster), INERT_HOST)  # rows are cut
        for key, screen in (("i", IncidentScreen), ("e", EvidenceScreen),
                            ("a", AdviceScreen)):
            await pilot.press(key)
            await shows_the_markup(app, pilot, screen)
            await pilot.press("escape")
            await pilot.pause()
        await pilot.press("enter")  # the selected rank's screen: its saved log and alerts
        await shows_the_markup(app, pilot, RankScreen)
        await wait_for(pilot, lambda: screen_text(app).count(MARKUP) >= 3, tries=200)
        tooltip = app.screen.query_one("#log-title").tooltip  # the log's note, whole: never
        assert isinstance(tooltip, Content) and tooltip.plain  # markup (a test's app shows none)
        await pilot.press("escape", "ctrl+p", *"e-000", "down")
        await pilot.pause(0.3)
        assert isinstance(app.screen, CommandPalette)
        assert INERT_HOST in offered(app)  # the host, as offered
        await pilot.press("enter")
        await pilot.pause()
        assert app.is_running and app.return_code is None
