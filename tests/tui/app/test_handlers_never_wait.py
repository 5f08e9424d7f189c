"""Nothing on the app's message pump waits on the engine: an engine alive but not answering
holds no key, and the header's data age runs on its own clock while no analysis comes."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.engine.snapshot import RankHistory, Snapshot
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.screens.help import HelpScreen
from ranktop.tui.screens.rank import RankScreen
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock, screen_text

KEY_SECONDS = 2.0  # generous: a key is handled in milliseconds when nothing holds the pump


class SilentHistory(ThreadEngine):
    """An engine whose snapshots come without the history, as an engine apart sends them,
    and whose ``rank_history`` never answers (stopped, swapped out, deadlocked)."""

    asked = 0

    async def poll(self, maps=None) -> Snapshot:
        snapshot = await super().poll(maps)
        return replace(snapshot, analysis=replace(snapshot.analysis, history=None))

    async def rank_history(self, rank: int, at: float | None = None) -> RankHistory:
        self.asked += 1
        await asyncio.Event().wait()  # never
        raise AssertionError("unreachable")


def silent_app(clock: FakeClock) -> RanktopApp:
    source = demo_source(DemoSettings(4, 8, seed=7), clock, started=START)
    engine = SilentHistory(load_settings(environ={}), source, clock=clock)
    return RanktopApp(load_settings(environ={}), engine=engine, clock=clock, poll=False)


async def handled(pilot, check) -> bool:
    for _ in range(int(KEY_SECONDS / 0.05)):
        if check():
            return True
        await pilot.pause(0.05)
    return False


async def test_keys_are_handled_while_the_engine_never_answers_a_rank_screen():
    clock = FakeClock(START + 20.0)
    app = silent_app(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        app.open_rank(3)
        await pilot.pause()
        assert isinstance(app.screen, RankScreen)
        clock.now += 2.0
        await app.poll_once()  # its analysis comes without history: the screen asks for it
        await pilot.pause()
        assert app.engine.asked >= 1  # asked, and never answered
        await pilot.press("question_mark")
        assert await handled(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        assert await handled(pilot, lambda: isinstance(app.screen, RankScreen))
        await pilot.press("ctrl+c")
        assert await handled(pilot, lambda: app._exit)


def header(app: RanktopApp) -> str:
    return screen_text(app).splitlines()[0]


async def test_the_data_age_in_the_header_grows_while_no_analysis_comes():
    clock = FakeClock(START + 20.0)
    app = silent_app(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        assert "data 0.0 s old" in header(app)
        clock.now += 6.0  # the engine stopped: no poll, no analysis
        assert await handled(pilot, lambda: "data 6.0 s old" in header(app))
