"""The simulator's slow ranks and slow jobs: a slow pipeline stage, a slow replica with
InfiniBand errors, a different slow rank every step, and a whole job slowed evenly."""

from __future__ import annotations

import statistics

import pytest
from ranktop.tui.core.parallelism import fit_world, parse
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.scenario import Fault, Scenario

P = fit_world(parse("tp=4,pp=4"), 64)  # 8 nodes of 8 GPUs: dp = 4


def cluster(*faults: Fault) -> SimCluster:
    scenario = Scenario("slow", 100.0, 1.12, 1000, faults, parallelism="tp=4,pp=4")
    return SimCluster(nodes=8, gpus_per_node=8, seed=3, scenario=scenario)


def ratios(values: list[float]) -> list[float]:
    typical = statistics.median(values)
    return [v / typical for v in values]


def test_a_slow_stage_is_every_rank_of_that_stage_and_no_other():
    sim = cluster(Fault("stage_imbalance", None, 10.0, 50.0, {"stage": -1, "factor": 1.25}))
    compute = ratios(sim.frame_at(30.0).values["compute_time"])
    slow = {r for r, v in enumerate(compute) if v > 1.15}
    assert slow == {r for r in range(64) if P.stage(r) == 3}
    assert "ib_errors" not in sim.frame_at(30.0).values  # no InfiniBand collector in this job


def test_a_slow_replica_is_its_ranks_with_infiniband_errors():
    sim = cluster(Fault("replica_slow", 21, 10.0, 50.0, {"factor": 1.3}))
    values = sim.frame_at(30.0).values
    replica = {r for r in range(64) if P.replica(r) == P.replica(21)}
    assert {r for r, v in enumerate(ratios(values["compute_time"])) if v > 1.2} == replica
    assert {r for r, v in enumerate(values["ib_errors"]) if v > 0} == replica
    assert not any(sim.frame_at(70.0).values["ib_errors"])


def test_data_imbalance_slows_one_rank_per_step_a_different_one_each_time():
    sim = cluster(Fault("data_imbalance", None, 10.0, 80.0, {"factor": 1.3}))
    slowest = set()
    for t in range(20, 80, 2):
        compute = ratios(sim.frame_at(float(t)).values["compute_time"])
        hot = [r for r, v in enumerate(compute) if v > 1.2]
        assert len(hot) == 1, t
        slowest.add(hot[0])
    assert len(slowest) > 10


def test_a_job_slowdown_slows_every_rank_alike():
    sim = cluster(Fault("job_slowdown", None, 50.0, 40.0, {"factor": 1.2}))
    before, during = sim.frame_at(30.0).values, sim.frame_at(70.0).values
    assert statistics.median(during["step_time"]) == pytest.approx(
        1.2 * statistics.median(before["step_time"]), rel=0.02)
    assert max(ratios(during["compute_time"])) < 1.02


def test_a_stage_past_the_jobs_stages_is_refused():
    with pytest.raises(ValueError, match="stage 4 is past the job's 4 stages"):
        cluster(Fault("stage_imbalance", None, 10.0, 50.0, {"stage": 4, "factor": 1.2}))
