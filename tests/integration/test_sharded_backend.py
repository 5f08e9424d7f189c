"""ranktop against a real sharded backend: two shard Prometheus processes each keeping half the
nodes of a simulated job, a front reading both through remote_read (sharded.py). With a shard
stopped the front still answers 200, with part of the series and a warning beside them; the
poll says so, and the ranks come back whole once the shard does."""

from __future__ import annotations

import math
import time

import pytest
from ranktop.tui.core.analysis import Analyser, Analysis
from ranktop.tui.core.anomaly import Anomaly
from ranktop.tui.core.model import Frame, Health
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.ranks import STEP_METRIC
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.integration.cluster import HERE, SkippingSimulator, instant, wait_for
from tests.integration.sharded import ShardedBackend, sharded

JOB = "integration-faults"
NODES = 16
RANKS = NODES * 8
STOPPED = 1  # the shard stopped and started again


@pytest.fixture
def simulator():
    """The job, on a clock a test can skip ahead."""
    started = SkippingSimulator(HERE / "scenario-sharded.toml", seed=7, nodes=NODES)
    yield started
    started.stop()


@pytest.fixture
def backend(simulator, tmp_path):
    """The sharded backend over the job, once its front answers every rank."""
    with sharded(tmp_path, [simulator.port], JOB, RANKS) as backend:
        yield backend


def answered(frame: Frame) -> set[int]:
    """The ranks with a step time in ``frame``."""
    return {rank for rank, value in enumerate(frame.values[STEP_METRIC])
            if not math.isnan(value)}


def fresh(backend: ShardedBackend) -> bool:
    """Whether the front answers every rank with a sample of the last 3 s."""
    newest = instant(backend.url, f'count(time() - timestamp(training_step_seconds'
                                  f'{{training_job="{JOB}"}}) < 3)')
    return bool(newest) and float(newest[0]["value"][1]) >= RANKS


def test_a_stopped_shard_is_a_partial_answer_then_whole_again(backend):
    kept = backend.ranks_on(STOPPED, JOB)
    assert 0 < len(kept) < RANKS  # each shard holds some of the job's ranks
    settings = load_settings(overrides={"prometheus": {"url": backend.url, "job": JOB}},
                             environ={})
    source = PrometheusSource(settings)

    assert answered(source.poll_now()) == set(range(RANKS))
    assert source.status().health is Health.OK and source.status().partial == ()

    backend.stop_shard(STOPPED)
    frame = source.poll_now()  # the poll succeeds: the front answers 200, with half
    assert answered(frame) == set(range(RANKS)) - kept
    status = source.status()
    assert status.health is Health.SLOW and status.partial[0].startswith("remote_read: ")
    assert frame.unknown == kept  # not answered: not known, not down
    assert status.message.startswith("1 part of the backend failed — 127.0.0.1:")
    assert status.message.endswith(f"connection refused; {len(kept)} ranks not answered "
                                   "(not known, not down)")
    assert len(source.rank_map) == RANKS  # nobody renumbered
    # a past moment read through the front now: its range answers are partial alike
    moments = [frame.time - 2.0, frame.time]  # the front held every rank by then
    past = [replayed for replayed, _ in source.frames_at(moments)]
    assert past and all(replayed.unknown == kept for replayed in past)

    backend.start_shard(STOPPED)
    wait_for(lambda: fresh(backend), "the shard's ranks scraped again")
    assert answered(source.poll_now()) == set(range(RANKS))
    assert source.status().health is Health.OK and source.status().partial == ()


HOT_BEHIND = 12  # gpu-node-001: on the shard stopped, hot from the start
HOT_LATER = 20  # gpu-node-002: on the shard that answers, hot from scenario time 200
LATER_AT = 200.0
NO_VERDICT = {"missing", "never_seen", "hang"}


class Watch:
    """ranktop's source and analysis over the front, polled about once a second (a poll's
    own time), every analysis kept."""

    def __init__(self, url: str) -> None:
        settings = load_settings(overrides={"prometheus": {"url": url, "job": JOB}},
                                 environ={})
        self.source = PrometheusSource(settings)
        self.analyser = Analyser(settings, JOB)
        self.seen: list[Analysis] = []

    def poll(self) -> Analysis:
        time.sleep(max(0.0, 1.0 - (time.monotonic() - getattr(self, "_last", 0.0))))
        self._last = time.monotonic()
        frame = self.source.poll_now()
        analysis = self.analyser.analyse(frame, self.source.status(), self.source.rank_map)
        self.seen.append(analysis)
        return analysis

    def until(self, what, polls: int) -> Analysis:
        for _ in range(polls):
            analysis = self.poll()
            if what(analysis):
                return analysis
        raise AssertionError(f"not within {polls} polls")


def thermal(analysis: Analysis, rank: int) -> Anomaly | None:
    return next((a for a in analysis.anomalies if a.kind == "thermal" and a.rank == rank),
                None)


def test_an_outage_starts_no_verdict_behind_it_and_misses_none_before_it(backend, simulator):
    """A shard stopped while the job runs: partial said at the first poll; no missing, hang or
    never-seen verdict on the ranks it keeps, whose confirmed fault holds; a fault that
    begins on the answered half meanwhile is found; all back at the first poll after."""
    behind = backend.ranks_on(STOPPED, JOB)
    assert HOT_BEHIND in behind and HOT_LATER not in behind
    watch = Watch(backend.url)
    before = watch.until(lambda a: (t := thermal(a, HOT_BEHIND)) is not None and t.confirmed,
                         polls=30)
    held_since = thermal(before, HOT_BEHIND).since

    backend.stop_shard(STOPPED)
    stopped_at = len(watch.seen)
    first = watch.poll()
    assert first.status.partial and first.unknown == behind  # said within one poll
    simulator.skip_to(LATER_AT)  # rank 20 heats up now, on the half that answers
    found = watch.until(lambda a: thermal(a, HOT_LATER) is not None, polls=20)
    watch.until(lambda a: thermal(a, HOT_LATER).confirmed, polls=20)
    outage = watch.seen[stopped_at:]
    for analysis in outage:
        assert not {a.kind for a in analysis.anomalies} & NO_VERDICT, analysis.anomalies
        held = thermal(analysis, HOT_BEHIND)
        assert held is not None and held.confirmed and held.since == held_since
        assert held.unseen_since is not None
    assert thermal(found, HOT_LATER).unseen_since is None

    backend.start_shard(STOPPED)
    wait_for(lambda: fresh(backend), "the shard's ranks scraped again")
    back = watch.poll()
    assert back.unknown == frozenset() and back.ranks_up == RANKS and not back.status.partial
    assert thermal(back, HOT_BEHIND).since == held_since  # the same fault, not a new one
    assert not {a.kind for a in back.anomalies} & NO_VERDICT and back.restarts == ()
