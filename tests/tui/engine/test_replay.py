"""Past moments replayed: the verdicts at a moment are the ones the live console showed then.

The demo's job is deterministic, so a console that watched it poll by poll is the ground
truth: every anomaly (kind, rank, pending or confirmed, start) and the hang's culprit."""

from __future__ import annotations

import asyncio
import re
import threading

import pytest
from ranktop.tui.core.analysis import Analyser, Analysis
from ranktop.tui.engine import past_frames
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.engine.replay import NothingThen, Replay
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.flight_writer import FLIGHT_FOLDER, FlightWriter
from ranktop.tui.simulator.log_writer import LogWriter
from ranktop.tui.simulator.scenario import load_scenario
from ranktop.tui.sources.base import Source
from ranktop.tui.sources.demo import DemoSource, demo_source

from tests.tui.conftest import START, FakeClock

STEP = 2.0
DEATH = 172.0  # the demo scenario's rank 455 dies here


def verdicts(analysis: Analysis) -> list[tuple]:
    return sorted((a.kind, a.rank, a.confirmed, round(a.since)) for a in analysis.anomalies)


def watched(seconds: float, nodes: int = 64) -> tuple[DemoSource, dict[float, list[tuple]]]:
    """The demo's job watched live from its start, poll by poll: each poll's verdicts."""
    clock = FakeClock(START)
    source = demo_source(DemoSettings(nodes, 8, seed=7), clock, started=START)
    settings = load_settings(environ={})
    analyser = Analyser(settings, source.job_name)
    seen: dict[float, list[tuple]] = {}
    for poll in range(int(seconds / STEP) + 1):
        clock.now = START + poll * STEP
        frame = asyncio.run(source.poll())
        seen[clock.now] = verdicts(analyser.analyse(frame, source.status(), source.rank_map))
    return source, seen


def test_every_moment_replayed_shows_the_verdicts_the_live_console_showed():
    source, live = watched(330.0)
    replay = Replay(load_settings(environ={}), source)
    # After warm-up, across every fault of the scenario: 40 s, 68 s ... 292 s, 320 s.
    moments = sorted(live)[20::14]
    # Out of order: fresh replays, steps forward that go on from the last, steps back.
    order = moments[1::2] + moments[::-2]
    for moment in order:
        assert verdicts(replay.at(moment)) == live[moment], moment - START
    assert {kind for moment in moments for kind, *_ in live[moment]} >= {
        "straggler", "missing", "job_stall", "memory", "nvlink_errors", "thermal", "loss"}
    # The remapped row rose at 130 s and the NVLink errors at 98 s: minutes before the
    # detectors' 90-s window of 292 s, dated as the live console dated them.
    assert START + 292.0 in moments
    starts = {a.kind: round(a.since - START) for a in replay.at(START + 292.0).anomalies}
    assert (starts["memory"], starts["nvlink_errors"]) == (130, 98)


@pytest.mark.parametrize("prompt_triage", [False, True])
def test_a_replayed_moment_names_the_rank_that_hung_the_job(tmp_path, prompt_triage):
    """The replay judges as the live console did, whether the live console's triage
    answered each poll at once (a quiet machine) or late (a loaded one): the hang began when
    rank 455 went down, not when the last read was asked for."""
    cluster = SimCluster(64, 8, 7, load_scenario())
    clock = FakeClock(START)
    flight = FlightWriter(cluster, tmp_path / FLIGHT_FOLDER, 7, epoch=START)
    writer = LogWriter(cluster, tmp_path, seed=7, epoch=START, flight=flight)
    source = DemoSource(cluster, clock, START, writer)
    settings = load_settings(environ={})
    pipeline = Pipeline(settings, source, clock=clock)
    for poll in range(int((DEATH + 30.0) / STEP) + 1):
        clock.now = START + poll * STEP
        analysis = asyncio.run(pipeline.poll())
        if prompt_triage and pipeline.triage is not None:
            assert pipeline.triage.wait(30.0)
    live = asyncio.run(pipeline.settle(analysis, timeout=30.0))
    assert live.hang is not None and live.hang.behind
    hang = next(a for a in live.anomalies if a.kind == "hang")
    assert hang.since == START + DEATH

    replayed = Replay(settings, source, triage_wait=30.0).at(clock.now)
    assert replayed.hang is not None
    assert replayed.hang.behind == live.hang.behind
    assert 455 in replayed.hang.behind
    assert verdicts(replayed) == verdicts(live)


def test_a_moment_is_brought_down_to_the_refresh_grid_and_given_again_from_memory():
    source, _ = watched(0.0, nodes=4)
    source.clock.now = START + 200.0
    asked: list[float] = []  # the time of each frame the source gave
    frames_at = source.frames_at

    def counted(times):
        for frame, rank_map in frames_at(times):
            asked.append(frame.time)
            yield frame, rank_map

    source.frames_at = counted
    replay = Replay(load_settings(environ={}), source)
    first = replay.at(START + 151.3)
    assert first.frame is not None and first.frame.time == START + 150.0
    fetched = len(asked)
    assert replay.at(START + 150.9) is first and len(asked) == fetched
    replay.at(START + 148.0)  # one step back: the ledger's minutes, the rest kept
    assert len(asked[fetched:]) <= len(range(0, 600, 60))


def test_frames_kept_for_stepping_are_bounded(monkeypatch):
    source, _ = watched(0.0, nodes=4)
    per_frame = sum(map(len, next(source.frames_at([START + 10.0]))[0].values.values()))
    monkeypatch.setattr(past_frames, "FRAME_VALUES_KEPT", per_frame * 5)
    replay = Replay(load_settings(environ={}), source)
    replay.at(START + 100.0)
    replay.at(START + 40.0)
    assert len(replay.frames) <= 5


def test_before_the_job_began_there_is_nothing_to_show():
    source, _ = watched(0.0, nodes=4)
    with pytest.raises(NothingThen, match="nothing at"):
        Replay(load_settings(environ={}), source).at(START - 600.0)


def test_a_source_without_history_says_so():
    class Now(Source):
        name = "NVML (this node)"
        job_name = "local"

    with pytest.raises(NothingThen, match="keeps no history"):
        Replay(load_settings(environ={}), Now()).at(START)


def test_the_engine_gives_a_moment_as_a_snapshot_marked_with_it():
    clock = FakeClock(START + 200.0)
    source = demo_source(DemoSettings(4, 8, seed=7), clock, started=START)
    engine = ThreadEngine(load_settings(environ={}), source, clock=clock)
    live = asyncio.run(engine.poll())
    past = asyncio.run(engine.at(START + 101.0))
    assert past.at == START + 100.0 and live.at is None
    assert past.analysis.frame is not None and past.analysis.frame.time == START + 100.0
    assert past.version == live.version
    history = asyncio.run(engine.rank_history(3, at=START + 101.0))
    times = [p.time for p in history.series("temperature", 3)]
    assert times and max(times) == START + 100.0


def test_a_gap_in_the_backends_history_is_said_with_the_moment():
    source, _ = watched(0.0, nodes=4)
    source.clock.now = START + 200.0
    frames_at = source.frames_at
    gap = (START + 150.0, START + 170.0)

    def with_a_gap(times):
        return frames_at([t for t in times if not gap[0] <= t < gap[1]])

    source.frames_at = with_a_gap
    shown = Replay(load_settings(environ={}), source).at(START + 180.0)
    assert re.search(r"^at \S+; no data at 10 of the \d+ refreshes before it "
                     r"\(a gap in scraping\?\)$", shown.status.message)
    whole = Replay(load_settings(environ={}), watched(0.0, nodes=4)[0]).at(START + 180.0)
    assert "no data" not in whole.status.message


def test_a_longer_look_back_asks_little_before_the_job_began():
    source, _ = watched(0.0, nodes=64)
    source.clock.now = START + 200.0
    asked: list[float] = []
    frames_at = source.frames_at

    def counted(times):
        asked.extend(times)
        return frames_at(times)

    source.frames_at = counted
    # At 150 s rank 201 has straggled since 50 s, before the detectors' 90-s window: the
    # replay looks back further, to where the job began, and no further.
    analysis = Replay(load_settings(environ={}), source).at(START + 150.0)
    assert any(a.kind == "straggler" and a.since == START + 50.0 for a in analysis.anomalies)
    before = [t for t in asked if t < START]
    ledger = len(range(0, 600, 60))
    assert len(before) <= past_frames.PROBE_FRAMES + ledger


class Asked:
    """What a source is asked for its past: the frames' times, and the other reads."""

    def __init__(self, source: DemoSource) -> None:
        self.frames: list[float] = []
        self.reads = 0
        frames_at, lookback, job_past = source.frames_at, source.lookback, source.job_past

        def counted_frames(times):
            self.frames.extend(times)
            return frames_at(times)

        def counted(read):
            def asked(*args, **kwargs):
                self.reads += 1
                return read(*args, **kwargs)
            return asked

        source.frames_at = counted_frames
        source.lookback, source.job_past = counted(lookback), counted(job_past)

    @property
    def total(self) -> int:
        return len(self.frames) + self.reads


def shown(analysis: Analysis) -> tuple:
    """What the console shows of a moment: verdicts, the hang's culprits, time and status."""
    assert analysis.frame is not None
    behind = analysis.hang.behind if analysis.hang is not None else None
    return verdicts(analysis), behind, analysis.frame.time, analysis.status.message


def test_a_prepared_moment_is_given_without_asking_the_source():
    source, _ = watched(0.0, nodes=4)
    source.clock.now = START + 300.0
    replay = Replay(load_settings(environ={}), source)
    replay.at(START + 200.0)
    asked = Asked(source)
    for moment in (START + 202.0, START + 198.0, START + 260.0, START + 140.0):
        assert replay.prepare(moment)
    assert asked.total > 0
    before = asked.total
    for moment in (START + 202.0, START + 198.0, START + 260.0, START + 140.0):
        replay.at(moment)
    assert asked.total == before


def test_preparing_moments_never_changes_what_they_show():
    source, live = watched(290.0)
    settings = load_settings(environ={})
    prepared, plain = Replay(settings, source), Replay(settings, source)
    moments = [START + t for t in (150.0, 152.0, 148.0, 212.0, 88.0, 214.0, 210.0)]
    prepared.at(moments[0])
    for moment in moments[1:]:
        assert prepared.prepare(moment)
    for moment in moments:
        assert shown(prepared.at(moment)) == shown(plain.at(moment)), moment - START
        assert verdicts(plain.at(moment)) == live[moment]
    assert any(live[moment] for moment in moments)


class WaitedLock:
    """A lock that tells when a caller had to wait for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.waited = threading.Event()

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            self.waited.set()
            self._lock.acquire()

    def __exit__(self, *exc) -> None:
        self._lock.release()


def test_a_moment_asked_while_one_is_prepared_is_not_kept_waiting_for_it():
    source, live = watched(290.0)
    replay = Replay(load_settings(environ={}), source)
    replay.at(START + 200.0)
    lock = replay._lock = WaitedLock()  # type: ignore[assignment]
    preparing: list[int] = []  # the frames the prepared replay went through
    answered: list[Analysis] = []

    def ask() -> None:
        answered.append(replay.at(START + 230.0))

    asker = threading.Thread(target=ask)

    def progress(index: int, total: int) -> None:
        if threading.current_thread() is not preparer:
            return
        preparing.append(index)
        if index == 5:  # four frames analysed of the minute's thirty: the asker comes
            asker.start()
            assert lock.waited.wait(timeout=60.0)

    replay.progress = progress
    kept: list[bool] = []
    preparer = threading.Thread(target=lambda: kept.append(replay.prepare(START + 260.0)))
    preparer.start()
    preparer.join()
    asker.join()
    assert kept == [False] and preparing == [1, 2, 3, 4, 5]
    # The moment asked went on from where the prepared one stopped, and shows the truth.
    assert verdicts(answered[0]) == live[START + 230.0]
    assert verdicts(replay.at(START + 260.0)) == live[START + 260.0]
