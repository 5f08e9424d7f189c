"""Goodput where ranktop starts late or shows a past moment: the hour before comes from
the source's past of the step counter, and says how much of the hour it covers."""

from __future__ import annotations

import asyncio

import pytest
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.engine.replay import Replay
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.goodput_truth import GoodputTruth
from ranktop.tui.sources.demo import DemoSource

from tests.tui.conftest import START, FakeClock

GOAL = 0.02  # two percentage points


class NoPast(DemoSource):
    """The demo as a source that keeps no past."""

    keeps_past = False

    def lookback(self, job_values, seconds, step, until=None):
        return None

    def job_past(self, job_values, seconds, step, until):
        return None


def first_poll(source_type: type[DemoSource], cluster: SimCluster, at: float):
    clock = FakeClock(START + at)
    pipeline = Pipeline(load_settings(environ={}), source_type(cluster, clock, START),
                        clock=clock)
    return asyncio.run(pipeline.poll()).goodput


def test_a_late_start_knows_the_time_before_it_from_the_source() -> None:
    cluster = SimCluster(8, 8, 0)
    goodput = first_poll(DemoSource, cluster, 1000.0)
    assert goodput.covered == pytest.approx(1000.0, abs=25)  # the job's whole past
    assert not goodput.whole_hour
    assert goodput.hour == pytest.approx(
        GoodputTruth(cluster).over(1000.0 - goodput.covered, 1000.0).share, abs=GOAL)
    assert goodput.job_began == pytest.approx(START, abs=20)
    assert goodput.job == pytest.approx(goodput.hour)


def test_a_late_start_without_a_past_covers_only_what_it_watched() -> None:
    goodput = first_poll(NoPast, SimCluster(8, 8, 0), 1000.0)
    assert goodput.covered < 10
    assert goodput.job_began is None


def test_a_past_moment_knows_its_hour() -> None:
    cluster = SimCluster(8, 8, 0)
    source = DemoSource(cluster, FakeClock(START + 5000.0), START)
    moment = 4500.0
    goodput = Replay(load_settings(environ={}), source).at(START + moment).goodput
    assert goodput.whole_hour
    assert goodput.hour == pytest.approx(
        GoodputTruth(cluster).over(moment - 3600.0, moment).share, abs=GOAL)


def test_a_start_hours_after_the_job_began_finds_its_start_further_back() -> None:
    cluster = SimCluster(8, 8, 0)
    at = 3 * 3600.0
    goodput = first_poll(DemoSource, cluster, at)
    assert goodput.whole_hour
    assert goodput.job_began == pytest.approx(START, abs=600)  # coarsely
    since = goodput.job_began - START
    assert goodput.job == pytest.approx(GoodputTruth(cluster).over(since, at).share, abs=GOAL)
