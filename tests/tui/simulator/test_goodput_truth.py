"""The simulator's true goodput, and ranktop's measure of it over a loop of the demo."""

from __future__ import annotations

import asyncio

import pytest
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.goodput_truth import GoodputTruth
from ranktop.tui.simulator.scenario import Fault, Scenario
from ranktop.tui.sources.demo import DemoSource

from tests.tui.conftest import START, FakeClock

POLL = 2.0
GOAL = 0.02  # two percentage points


def test_the_demo_loses_its_hang_and_stall_whole_and_some_to_slow_ranks() -> None:
    truth = GoodputTruth(SimCluster(8, 8, 0)).over(0.0, 300.0)
    assert truth.lost["hang"] == pytest.approx(48.0)  # rank 455 dead from 172 s to 220 s
    assert truth.lost["stall"] == pytest.approx(25.0)  # the storage hiccup, 232 s to 257 s
    assert 0 < truth.lost["slowdown"] < 60
    assert truth.share * 300 + sum(truth.lost.values()) == pytest.approx(300.0)


def test_a_healthy_loop_is_all_progress_and_a_slow_one_loses_the_difference() -> None:
    slow = Fault("job_slowdown", None, 100, 100, {"factor": 1.25})
    cluster = SimCluster(1, 8, 0, Scenario("job", 300, 1.12, 4194304, (slow,)))
    truth = GoodputTruth(cluster)
    assert truth.over(0.0, 100.0).share == pytest.approx(1.0)
    assert truth.over(100.0, 200.0).share == pytest.approx(0.8)
    assert truth.over(0.0, 300.0).lost == pytest.approx({"slowdown": 20.0})


def test_ranktop_measures_a_loop_of_the_demo_within_two_points_of_the_truth() -> None:
    cluster = SimCluster(8, 8, 0)
    clock = FakeClock(START)
    pipeline = Pipeline(load_settings(environ={}), DemoSource(cluster, clock, START),
                        clock=clock)
    for t in range(0, 301, int(POLL)):
        clock.now = START + t
        goodput = asyncio.run(pipeline.poll()).goodput
    truth = GoodputTruth(cluster).over(0.0, 300.0)
    assert goodput.hour == pytest.approx(truth.share, abs=GOAL)
    assert goodput.baseline_step == pytest.approx(1.12, rel=0.01)
    for cause in ("hang", "stall", "slowdown"):
        assert goodput.lost[cause] == pytest.approx(truth.lost[cause], abs=0.02 * 300)
