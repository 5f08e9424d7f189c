"""The rank screen when its engine cannot answer, and the logs it lets go of."""

from __future__ import annotations

import asyncio
import threading

from ranktop.tui.engine.client import EngineSilent
from ranktop.tui.logs.tail import LogLine
from ranktop.tui.screens import rank_requests
from ranktop.tui.screens.rank import RankScreen
from ranktop.widgets.log_view import LogView

from tests.tui.conftest import make_app, screen_text
from tests.tui.screens.test_rank_screen import open_rank, poll, settle

SILENT = "the engine did not answer in 60 s"


def silent(*args: object) -> None:
    raise EngineSilent(SILENT)


async def test_a_silent_engine_is_said_in_the_log_and_alerts_titles_not_waited_for():
    asked: list[int] = []

    def silent_gpu(rank: int) -> str:
        asked.append(rank)
        silent()

    app = make_app(at=40.0)
    app.engine.open_logs = silent
    app.engine.alert_rows = silent
    app.engine.gpu_model = silent_gpu
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 40.0)
        await open_rank(app, pilot, 3)
        await settle(pilot)
        text = screen_text(app)
        assert f"no log: {SILENT}" in text
        assert f"alerts: {SILENT}" in text
        await poll(app, pilot, 42.0)
        await poll(app, pilot, 44.0)
        assert asked == [3]  # not waited for again at each draw


async def test_the_gpu_model_is_asked_for_once_per_rank_not_at_each_draw():
    app = make_app(at=40.0)
    asked: list[int] = []
    model = app.engine.gpu_model

    def counted(rank: int) -> str:
        asked.append(rank)
        return model(rank)

    app.engine.gpu_model = counted
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 40.0)
        await open_rank(app, pilot, 3)
        for at in (42.0, 44.0, 46.0):
            await poll(app, pilot, at)
        assert "NVIDIA H100 80GB HBM3" in screen_text(app)
        await pilot.press("right_square_bracket")
        await answered(app, pilot)
        assert asked == [3, 4]


async def answered(app, pilot) -> None:
    """Once the rank screen's GPU model question is answered and drawn."""
    workers = [w for w in app.screen.workers if w.group == "rank-gpu-model"]
    if workers:
        await app.screen.workers.wait_for_complete(workers)
    await pilot.pause()


async def test_the_screen_opens_and_moves_while_the_engine_is_slow_to_name_the_gpu():
    # An engine in its own process busy with a 16,384-rank poll is a round trip away: the
    # model is asked off the screen's thread, and drawn when it comes.
    app = make_app(at=40.0)
    release = threading.Event()
    callers: list[threading.Thread] = []

    def slow(rank: int) -> str:
        callers.append(threading.current_thread())
        release.wait(60)
        return "NVIDIA H200"

    app.engine.gpu_model = slow
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 40.0)
        await open_rank(app, pilot, 3)
        assert "rank 3 " in screen_text(app) and "NVIDIA H200" not in screen_text(app)
        await pilot.press("right_square_bracket")  # the screen answers keys meanwhile
        assert "rank 4 " in screen_text(app)
        release.set()
        await answered(app, pilot)
        assert "NVIDIA H200" in screen_text(app)
        assert callers and threading.main_thread() not in callers


class Counted:
    """A log that says whether it was closed."""

    name = "rank3.log"

    def __init__(self) -> None:
        self.closed = threading.Event()

    def tail(self, lines: int) -> list[LogLine]:
        return [LogLine("step 1", "plain")]

    def follow(self) -> list[LogLine]:
        return []

    def status(self) -> str:
        return ""

    def close(self) -> None:
        self.closed.set()


async def test_leaving_the_rank_screen_or_its_rank_closes_the_logs_it_opened(monkeypatch):
    monkeypatch.setattr(rank_requests, "FOLLOW_SECONDS", 0.01)
    opened: list[Counted] = []

    def open_logs(rank_map, rank):
        opened.append(Counted())
        return [opened[-1]], "rank3.log"

    app = make_app(at=40.0)
    app.engine.open_logs = open_logs
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 40.0)
        await open_rank(app, pilot, 3)
        await settle(pilot)
        assert app.screen.query_one(LogView).lines and not opened[0].closed.is_set()
        await pilot.press("right_square_bracket")  # the next rank's log in its place
        assert await asyncio.to_thread(opened[0].closed.wait, 60)
        assert not opened[1].closed.is_set()
        await pilot.press("escape")
        assert not isinstance(app.screen, RankScreen)
        assert await asyncio.to_thread(opened[1].closed.wait, 60)
