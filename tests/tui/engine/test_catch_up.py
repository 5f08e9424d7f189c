"""A late start's first screen at once: while the past is read behind the polls, each poll's
frame is shown without verdicts and says how far the reading is; once read, the verdicts are
those of a start that waited for it, and the event log has each active anomaly once."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from ranktop.tui.core.events import EventLog
from ranktop.tui.engine import pipeline as pipeline_module
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock

WAIT = 60.0  # seconds a test waits for a thread at most (never reached when all is well)
AT = 200.0  # the demo's rank 455 died at 172 s, its GPU's XID before: a late start's past
POLLS_BEHIND = 3


class HeldReplay(pipeline_module.Replay):
    """A replay whose reading of the past waits until the test lets it go on."""

    go_on = threading.Event()

    def bring(self, make, moment):
        assert HeldReplay.go_on.wait(WAIT)
        return super().bring(make, moment)


def started(tmp_path: Path, wait: float, log: str) -> tuple[Pipeline, FakeClock, EventLog]:
    clock = FakeClock(START + AT)
    events = EventLog(tmp_path / log)
    source = demo_source(DemoSettings(64, 8, 7), clock, started=START)
    return Pipeline(load_settings(environ={}), source, events, clock, wait), clock, events


def poll(pipeline: Pipeline, clock: FakeClock):
    analysis = asyncio.run(pipeline.poll())
    clock.now += 2.0
    return analysis


def verdicts(analysis) -> set[tuple[str, int | None, float, bool]]:
    return {(a.kind, a.rank, a.since, a.confirmed) for a in analysis.anomalies}


@pytest.fixture
def held(monkeypatch):
    HeldReplay.go_on.clear()
    monkeypatch.setattr(pipeline_module, "Replay", HeldReplay)
    yield HeldReplay.go_on
    HeldReplay.go_on.set()


def test_the_first_screen_comes_at_once_and_the_verdicts_once_the_past_is_read(
        tmp_path, held):
    behind, clock, events = started(tmp_path, 0.0, "behind.jsonl")
    reading = [poll(behind, clock) for _ in range(POLLS_BEHIND)]
    for analysis in reading:
        assert analysis.frame is not None and any(analysis.up)  # the maps have their values
        assert analysis.anomalies == () and analysis.hang is None  # no verdict without history
        assert analysis.catching_up is not None
        assert analysis.status.message.startswith("reading the ")
        assert analysis.status.message.endswith("%): verdicts once read")
        assert analysis.goodput.covered == 0.0  # nor goodput: it needs the hour before
        assert analysis.verdict_when_clear[0].startswith("pending: reading history (")
    assert events.read() == []  # nothing is a fact yet

    held.set()
    behind._catch_up.reading.result(WAIT)
    caught_up = poll(behind, clock)

    # the same start, waiting for its past before its first screen
    waited, same_clock, waited_events = started(tmp_path, float("inf"), "waited.jsonl")
    for _ in range(POLLS_BEHIND + 1):
        reference = poll(waited, same_clock)
    assert caught_up.catching_up is None and "verdicts once read" not in caught_up.status.message
    assert caught_up.frame.time == reference.frame.time
    assert verdicts(caught_up) == verdicts(reference)
    dead = [a for a in caught_up.anomalies if a.rank == 455]
    assert dead and min(a.since for a in dead) < START + AT  # from its real start, before ours
    journalled = {(e.kind, e.rank, e.state) for e in events.read()}
    assert journalled == {(e.kind, e.rank, e.state) for e in waited_events.read()}
    assert journalled and all(state == "start" for _, _, state in journalled)
    assert len(events.read()) == len(journalled)  # each once


def test_a_one_shot_waits_for_the_past_before_it_judges(tmp_path, held):
    pipeline, _, _ = started(tmp_path, 0.0, "report.jsonl")
    first = asyncio.run(pipeline.poll())
    assert first.catching_up is not None and first.anomalies == ()
    threading.Timer(0.2, held.set).start()
    settled = asyncio.run(pipeline.settle(first, 0.0))
    assert settled.catching_up is None and settled.frame.time == first.frame.time
    assert any(a.rank == 455 for a in settled.anomalies)


def test_a_small_past_read_within_the_wait_gives_the_first_screen_its_verdicts(tmp_path):
    pipeline, clock, _ = started(tmp_path, pipeline_module.CATCH_UP_WAIT_SECONDS * 100,
                                 "small.jsonl")
    first = poll(pipeline, clock)
    assert first.catching_up is None and any(a.rank == 455 for a in first.anomalies)


def test_the_wait_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv(pipeline_module.CATCH_UP_WAIT_VARIABLE, "0.25")
    assert pipeline_module.catch_up_wait_seconds() == 0.25
    monkeypatch.setenv(pipeline_module.CATCH_UP_WAIT_VARIABLE, "soon")
    assert pipeline_module.catch_up_wait_seconds() == pipeline_module.CATCH_UP_WAIT_SECONDS


def test_the_catch_up_lets_go_of_the_past_it_read_once_done(tmp_path, monkeypatch):
    pipeline, clock, _ = started(tmp_path, pipeline_module.CATCH_UP_WAIT_SECONDS * 100,
                                 "forgets.jsonl")
    forgotten = []
    monkeypatch.setattr(pipeline.source, "forget_past", lambda: forgotten.append(True))
    first = poll(pipeline, clock)
    assert first.catching_up is None and forgotten == [True]

