"""The pipeline off the polling path: a poll never waits for the hang triage's reading of the
logs (its verdict shows on the poll after it finished; a one-shot can wait for it), and
never reads the event log back (it only appends)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from ranktop.tui.core.events import EventLog
from ranktop.tui.core.model import Health
from ranktop.tui.core.moment import shown
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.engine.replay import Replay
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock
from tests.tui.core.hang.test_triage import hung_job
from tests.tui.logs.test_triage_worker import WAIT, Blocked

DEAD = 455  # dies 172 s into the demo's scenario; the job then hangs


def pipeline_at(tmp_path: Path, at: float) -> tuple[Pipeline, FakeClock, Blocked]:
    settings = load_settings(overrides={"logs": {"spec": str(tmp_path / "rank{rank}.log")}},
                             environ={})
    clock = FakeClock(START + at)
    pipeline = Pipeline(settings, demo_source(DemoSettings(64, 8, 7), clock, started=START),
                        clock=clock)
    reader = Blocked(hung_job(512, dead=DEAD))
    pipeline.triage.read = reader
    return pipeline, clock, reader


def poll(pipeline: Pipeline, clock: FakeClock):
    analysis = asyncio.run(pipeline.poll())
    clock.now += 2.0
    return analysis


def test_polls_go_on_while_the_triage_is_blocked_and_its_verdict_follows(tmp_path) -> None:
    pipeline, clock, reader = pipeline_at(tmp_path, 168.0)
    try:
        for _ in range(6):  # up to 178 s: the rank is gone, a triage is asked for
            poll(pipeline, clock)
        assert reader.entered.wait(WAIT)
        later = [poll(pipeline, clock) for _ in range(5)]
        assert [a.frame.time for a in later] == [START + 180.0 + 2 * i for i in range(5)]
        assert all(a.hang is None for a in later) and not pipeline.error
        assert pipeline.triage.runs == 0 and not reader.release.is_set()
    finally:
        reader.release.set()
    assert pipeline.triage.wait(WAIT)
    analysis = poll(pipeline, clock)
    assert analysis.hang is not None and analysis.hang.behind == [DEAD]
    assert any(a.kind == "hang" and a.rank == DEAD for a in analysis.anomalies)
    assert analysis.hang.as_of is not None and analysis.hang.as_of < analysis.frame.time


def test_a_one_shot_waits_for_the_verdict_up_to_a_deadline(tmp_path) -> None:
    pipeline, clock, reader = pipeline_at(tmp_path, 168.0)
    try:
        for _ in range(6):
            analysis = poll(pipeline, clock)
        assert reader.entered.wait(WAIT)
        assert asyncio.run(pipeline.settle(analysis, 0.0)).hang is None  # not yet: no wait
    finally:
        reader.release.set()
    settled = asyncio.run(pipeline.settle(analysis, WAIT))
    assert settled.hang is not None and settled.hang.behind == [DEAD]
    assert settled.frame is analysis.frame  # no new poll
    assert any(a.kind == "hang" and a.rank == DEAD for a in settled.anomalies)


class AppendOnly(EventLog):
    """An event log that fails the test if anything reads it back."""

    appended = 0

    def append(self, events) -> None:
        AppendOnly.appended += len(events)
        super().append(events)

    def read(self, *args, **kwargs):
        raise AssertionError("the event log was read on the polling path")


def test_polls_append_to_the_event_log_and_never_read_it(tmp_path) -> None:
    clock = FakeClock(START + 160.0)
    source = demo_source(DemoSettings(64, 8, 7), clock, started=START)
    pipeline = Pipeline(load_settings(environ={}), source, AppendOnly(tmp_path / "e.jsonl"),
                        clock=clock)
    for _ in range(20):  # the XID, the death and the hang start: events to journal
        poll(pipeline, clock)
    assert not pipeline.error and AppendOnly.appended > 0


def test_a_first_frame_after_a_slow_catch_up_says_how_old_its_data_is(tmp_path) -> None:
    settings = load_settings(environ={})
    clock = FakeClock(START + 40.0)
    pipeline = Pipeline(settings, demo_source(DemoSettings(4, 8, 7), clock, started=START),
                        clock=clock)

    def slow_catch_up(now: float) -> None:
        pipeline._looked_back = True
        clock.now += 80.0  # the job's past took well over a minute to read

    pipeline._look_back = slow_catch_up
    first = asyncio.run(pipeline.poll())
    assert first.status.health is Health.SLOW  # never "ok" over data this old
    assert first.status.since == first.frame.time
    assert first.status.message.startswith(f"data of {shown(START + 40.0)}, 80 s old when "
                                           "analysed: the analysis was late")
    assert poll(pipeline, clock).status.health is Health.OK  # the next poll is fresh


def test_a_late_start_just_after_a_blip_still_sees_it(tmp_path) -> None:
    """The demo's XID shows for the 2 s before its rank dies (170 s to 172 s); a console
    started at 172.3 s, on a job whose start is off the refresh grid by half a second,
    catches up to the last grid step before its first poll, which sees the XID."""
    settings = load_settings(environ={})
    started = START + 0.5  # the grid's steps fall at 169.5, 171.5, … into the scenario
    clock = FakeClock(started + 172.3)
    pipeline = Pipeline(settings, demo_source(DemoSettings(64, 8, 7), clock, started=started),
                        clock=clock)
    first = asyncio.run(pipeline.poll())
    kinds = {(a.kind, a.rank) for a in first.anomalies}
    assert {("xid", DEAD), ("missing", DEAD)} <= kinds
    assert any(a.kind == "drain" and a.rank == DEAD for a in first.actions)


def test_a_one_shot_knows_who_else_its_drains_stop_after_catching_up(tmp_path,
                                                                    monkeypatch) -> None:
    """A report's one poll made while the job's past is still being read (a loaded
    machine), then settled on the caught-up analyser: its drains still say who else is on
    the node."""
    first_polled = threading.Event()
    bring = Replay.bring

    def slow_bring(self, *args, **kwargs):
        first_polled.wait(WAIT)
        return bring(self, *args, **kwargs)

    monkeypatch.setattr(Replay, "bring", slow_bring)
    clock = FakeClock(START + 190.0)
    pipeline = Pipeline(load_settings(environ={}),
                        demo_source(DemoSettings(64, 8, 7), clock, started=START),
                        clock=clock, catch_up_wait=0.0)
    first = asyncio.run(pipeline.poll())
    first_polled.set()
    settled = asyncio.run(pipeline.settle(first, WAIT))
    assert "gpu-node-056" in {a.node for a in settled.actions if a.kind == "drain"}
    assert [t.text for t in settled.neighbours["gpu-node-056"].others] == [
        "job eval-sweep-7 (GPUs 8, 9)"]
