"""A live poll that finds no rank while the backend holds the job's series until a while
ago: the job's series ended then."""

from __future__ import annotations

import asyncio

from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock
from tests.tui.ended_job import EndedJob


def engine_at(now: float, end: float | None) -> tuple[ThreadEngine, EndedJob]:
    clock = FakeClock(now)
    source = EndedJob(demo_source(DemoSettings(4, 8, 7), clock, started=START), end)
    return ThreadEngine(load_settings(environ={}), source), source


def test_a_poll_after_the_end_says_when_the_series_ended():
    engine, _ = engine_at(START + 400, end=START + 100.5)
    snapshot = asyncio.run(engine.poll())
    assert snapshot.ended is not None
    assert snapshot.ended.at == START + 100.5 and snapshot.ended.seen == START + 400
    assert snapshot.ended.said().endswith(", 5 min ago")


def test_a_job_that_answers_has_not_ended():
    engine, source = engine_at(START + 90, end=START + 100.5)
    assert asyncio.run(engine.poll()).ended is None
    source.demo.clock.now = START + 120
    assert asyncio.run(engine.poll()).ended is not None
    source.back = True  # a new attempt: its series answer again
    assert asyncio.run(engine.poll()).ended is None


def test_the_backend_is_asked_once_while_the_job_stays_gone():
    engine, source = engine_at(START + 400, end=START + 100.5)
    asked = []
    found = source.series_end
    source.series_end = lambda: asked.append(1) or found()
    for _ in range(5):
        assert asyncio.run(engine.poll()).ended.at == START + 100.5
        source.demo.clock.now += 2
    assert len(asked) == 1


def test_a_look_that_found_no_end_is_not_asked_again_for_a_minute():
    engine, source = engine_at(START + 400, end=START + 100.5)
    asked = []
    source.series_end = lambda: asked.append(1) and None  # the backend holds nothing
    for _ in range(31):  # a minute of polls, 2 s apart
        assert asyncio.run(engine.poll()).ended is None
        source.demo.clock.now += 2
    assert len(asked) == 2
