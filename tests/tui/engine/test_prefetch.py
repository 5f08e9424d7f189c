"""The moments next to the one shown, prepared in a thread: asked next, they come at once."""

from __future__ import annotations

from ranktop.tui.engine.prefetch import MINUTE_SECONDS, Prefetch, neighbours
from ranktop.tui.engine.replay import Replay
from ranktop.tui.settings.config import load_settings

from tests.tui.conftest import START
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
