"""The moments next to the one shown, prepared in a thread: asked next, they come at once."""

from __future__ import annotations

import asyncio

from ranktop.tui.engine.prefetch import MINUTE_SECONDS, Prefetch, neighbours
from ranktop.tui.engine.replay import Replay
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock
from tests.tui.engine.test_replay import Asked, watched

STEP = 2.0


def test_a_small_jobs_neighbours_are_a_refresh_and_a_minute_either_side():
    source, _ = watched(0.0, nodes=4)
    source.clock.now = START + 300.0
    replay = Replay(load_settings(environ={}), source)
    assert neighbours(replay, START + 201.0) == [START + 202.0, START + 198.0]  # none read
    replay.at(START + 200.0)
    assert neighbours(replay, START + 201.0) == [
        START + 202.0, START + 198.0, START + 200.0 + MINUTE_SECONDS,
        START + 200.0 - MINUTE_SECONDS]


def test_no_more_neighbours_than_the_replay_keeps_analyses_beside_the_one_shown(monkeypatch):
    source, _ = watched(0.0, nodes=4)
    replay = Replay(load_settings(environ={}), source)
    replay.at(START + 200.0)
    monkeypatch.setattr(Replay, "analyses_kept", property(lambda self: 2))
    assert neighbours(replay, START + 200.0) == [START + 202.0]


def test_the_moments_around_the_one_shown_are_then_given_without_asking_the_source():
    source, _ = watched(0.0, nodes=4)
    source.clock.now = START + 300.0
    replay = Replay(load_settings(environ={}), source)
    prefetch = Prefetch(replay)
    replay.at(START + 200.0)
    asked = Asked(source)
    with prefetch.polling():  # a live poll under way: nothing is read for the prefetch
        prefetch.around(START + 200.0)
        assert not prefetch.settled(timeout=0.2)
        assert asked.total == 0
    assert prefetch.settled(timeout=120.0)
    before = asked.total
    for moment in neighbours(replay, START + 200.0):
        replay.at(moment)
    assert before > 0 and asked.total == before
    prefetch.close()


def test_the_engine_prepares_the_steps_around_each_moment_it_shows():
    clock = FakeClock(START + 300.0)
    source = demo_source(DemoSettings(4, 8, seed=7), clock, started=START)
    engine = ThreadEngine(load_settings(environ={}), source, clock=clock)
    asyncio.run(engine.poll())
    asked = Asked(source)
    asyncio.run(engine.at(START + 201.0))
    assert engine.prefetch.settled(timeout=120.0)
    engine.prefetch.close()  # the steps below prepare nothing more: what they read is theirs
    before = asked.total
    after = asyncio.run(engine.at(START + 203.0))
    back = asyncio.run(engine.at(START + 199.0))
    assert asked.total == before  # without the prefetch, each would read its frame
    assert after.at == START + 202.0 and back.at == START + 198.0
    engine.close()
