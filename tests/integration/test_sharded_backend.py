"""ranktop against a real sharded backend: two shard Prometheus processes each keeping half the
nodes of a simulated job, a front reading both through remote_read (sharded.py). With a shard
stopped the front still answers 200, with part of the series and a warning beside them; the
poll says so, and the ranks come back whole once the shard does."""

from __future__ import annotations

import math

import pytest
from ranktop.tui.core.model import Frame, Health
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prom_ranks import STEP_METRIC
from ranktop.tui.sources.prometheus import PrometheusSource

from tests.integration.cluster import HERE, SkippingSimulator, instant, wait_for
from tests.integration.sharded import ShardedBackend, sharded

JOB = "integration-faults"
NODES = 16
RANKS = NODES * 8
STOPPED = 1  # the shard stopped and started again


@pytest.fixture
def simulator():
    """The job, on a clock a test can skip ahead."""
    started = SkippingSimulator(HERE / "scenario-faults.toml", seed=7, nodes=NODES)
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
    assert source.status().health is Health.OK

    backend.stop_shard(STOPPED)
    frame = source.poll_now()  # the poll succeeds: the front answers 200, with half
    assert answered(frame) == set(range(RANKS)) - kept
    status = source.status()
    assert status.health is Health.SLOW
    assert status.message.startswith("partial answer: the backend warns 'remote_read: ")
    assert "connection refused" in status.message
    assert len(source.rank_map) == RANKS  # nobody renumbered

    backend.start_shard(STOPPED)
    wait_for(lambda: fresh(backend), "the shard's ranks scraped again", timeout=15)
    assert answered(source.poll_now()) == set(range(RANKS))
    assert source.status().health is Health.OK
