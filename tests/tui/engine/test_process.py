"""The engine in a process of its own: the console through it, what crosses per poll, and
a console that outlives its engine."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest
from ranktop.tui.app.console import RanktopApp
from ranktop.tui.engine import process
from ranktop.tui.engine.client import EngineSilent
from ranktop.tui.engine.process import EngineFailed, ProcessEngine
from ranktop.tui.engine.protocol import Alive, GpuModel, Poll
from ranktop.tui.settings.config import DemoSettings, Settings, load_settings
from ranktop.tui.simulator.cluster import GPU_MODEL
from ranktop.tui.sources.demo import DemoSource, demo_source

from tests.tui.conftest import START, screen_text


def demo_at_40(settings: Settings) -> DemoSource:
    """The engine process's source: the demo 40 s into its scenario, on a clock that stands
    still (the child's own, made there)."""
    return demo_source(DemoSettings(4, 8, seed=7), lambda: START + 40.0, started=START)


def no_source(settings: Settings) -> DemoSource:
    raise ValueError("no data source given")


def notices(app: RanktopApp) -> list[str]:
    return [notice.message for notice in app._notifications]


async def test_the_console_says_its_engine_stopped_restarts_it_and_keeps_the_screen():
    engine = ProcessEngine(load_settings(environ={}), demo_at_40)
    app = RanktopApp(load_settings(), engine=engine, poll=False)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await app.poll_once()
            await pilot.pause()
            shown = screen_text(app)
            assert "llama-70b-pretrain" in shown and app.analysis.frame is not None
            killed = engine.pid
            os.kill(killed, signal.SIGKILL)
            await app.poll_once()
            await pilot.pause()
            assert any("engine process stopped" in n and "restarting" in n
                       for n in notices(app))
            assert engine.restarts == 1 and engine.pid != killed
            assert "llama-70b-pretrain" in screen_text(app) and app.analysis.frame is not None
            version = engine.latest.version
            await app.poll_once()
            await pilot.pause()
            assert engine.latest.version == version + 1  # versions go on across the restart
            assert app.analysis.frame is not None
    finally:
        engine.close()


def test_a_poll_crosses_without_the_history_and_the_rank_map_only_when_new():
    engine = ProcessEngine(load_settings(environ={}), demo_at_40)
    try:
        first = asyncio.run(engine.poll())
        second = asyncio.run(engine.poll())
        assert first.analysis.history is None and second.analysis.history is None
        assert len(second.analysis.rank_map) == 32  # put back from the one the UI holds
        assert second.rank_map_version == first.rank_map_version
        history = asyncio.run(engine.rank_history(5))
        times = [point.time for point in history.series("temperature", 5)]  # asked for
        polled = [first.analysis.frame.time, second.analysis.frame.time]
        assert times[-2:] == polled and len(times) > 2  # after the minutes caught up on
        points, note = engine.backfill(second.analysis.rank_map, 5)  # the rank screen's
        assert note == "" and points["temperature"]
        assert engine.gpu_model(5) == GPU_MODEL
    finally:
        engine.close()


def test_an_engine_whose_source_cannot_be_made_says_why():
    try:
        ProcessEngine(load_settings(environ={}), no_source)
    except EngineFailed as error:
        assert "no data source given" in str(error)
    else:
        raise AssertionError("the engine started without a source")


def test_closing_ends_the_engine_process_by_hanging_up_never_by_killing_it(monkeypatch):
    monkeypatch.setattr(process, "CLOSE_SECONDS", 60.0)  # a busy machine ends it slowly
    engine = ProcessEngine(load_settings(environ={}), demo_at_40)
    asyncio.run(engine.poll())
    engine.close()
    assert engine._process.exitcode == 0  # it saw the end of the pipe and returned


def test_a_request_cancelled_while_it_waits_leaves_the_others_answered():
    engine = ProcessEngine(load_settings(environ={}), demo_at_40)
    try:
        asked = engine._link.ask(GpuModel(5))
        asked.cancel()  # as a worker cancelled while waiting for its answer
        assert engine.answer(GpuModel(5)) == GPU_MODEL
        assert asyncio.run(engine.poll()).analysis.frame is not None
    finally:
        engine.close()


async def test_an_async_request_past_its_deadline_says_so_and_the_engine_answers_after():
    engine = ProcessEngine(load_settings(environ={}), demo_at_40, answer_seconds=0.3)
    try:
        os.kill(engine.pid, signal.SIGSTOP)  # alive, answering nothing for a while
        try:
            with pytest.raises(EngineSilent, match=r"did not answer in .* \(Poll\)"):
                await asyncio.wait_for(engine.ask(Poll()), 30)
        finally:
            os.kill(engine.pid, signal.SIGCONT)
        assert engine._link._pending == {}  # given up: nothing left waiting
        assert await asyncio.wait_for(engine.ask(Alive()), 30)
    finally:
        engine.close()


async def test_an_engine_that_stops_answering_is_restarted_after_its_deadline_and_said():
    engine = ProcessEngine(load_settings(environ={}), demo_at_40, alive_seconds=0.5)
    app = RanktopApp(load_settings(), engine=engine, poll=False)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            stopped = engine.pid
            os.kill(stopped, signal.SIGSTOP)  # alive, and answering nothing
            await asyncio.wait_for(app.poll_once(), 30)
            await pilot.pause()
            assert any("engine stopped answering" in n and "restarting" in n
                       for n in notices(app))
            assert engine.restarts == 1 and engine.pid != stopped
            assert await asyncio.wait_for(engine.ask(Alive()), 10)  # the new one answers
    finally:
        engine.close()
