"""The advice over a slice of the simulated day (``bench/advice_day.py``): a drain or reset
on the right node (and GPU) for every fault of the GPU, never one for a fault in software,
each on screen no later than a poll after its anomaly is confirmed."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from ranktop.tui.core.advice import advise as advice
from ranktop.tui.core.advice.advise import DRAIN, RESET, WATCH, Action
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.scenario import Fault, Scenario

from bench.advice_day import Judge, demo_truths, judge_run
from bench.day import CASES, day_scenario, truth_of

RANKS = 16  # two nodes of eight GPUs


@pytest.fixture(scope="module")
def slice_judged() -> Judge:
    # Seed 3's first 90 minutes: a row remap pending (XID 63), a rank dying alone, a rank
    # that never joins the collective, an application's XID (43), a straggler, a
    # double-bit ECC error (XID 48).
    scenario, truths = day_scenario(3, RANKS, hours=1.5)
    return judge_run(scenario, truths, RANKS // 8, seed=3)


def test_the_slice_holds_faults_of_the_gpu_and_of_software(slice_judged):
    names = {j.truth.name: j.truth.action for j in slice_judged.judged}
    assert {names["xid 63"], names["xid 48"]} == {RESET, DRAIN}
    assert names["straggler"] is None and names["xid 43"] is None


def test_every_fault_of_the_gpu_gets_its_action_on_its_node_and_no_other(slice_judged):
    for judged in slice_judged.judged:
        assert judged.right, (judged.truth.name, judged.acted, judged.wrong)
        assert not judged.truth.hardware or judged.truth.action in judged.kinds
    assert not slice_judged.stray


def test_each_action_is_on_screen_within_a_poll_of_the_confirmation(slice_judged):
    delays = {j.truth.name: j.delay_polls for j in slice_judged.judged}
    assert delays["xid 63"] is not None and delays["xid 48"] is not None
    assert all(d <= 1 for d in delays.values() if d is not None), delays


def straggler_judged() -> Judge:
    fault = Fault("straggler", 9, 20.0, 120.0, {"factor": 1.45})
    scenario = Scenario("one straggler", 200.0, 1.12, 4194304, (fault,))
    hosts = SimCluster(RANKS // 8, 8, 0, scenario).rank_map.hosts
    return judge_run(scenario, [truth_of(fault, list(hosts), 8)], RANKS // 8)


def test_a_straggler_is_watched_and_never_drained():
    judged = straggler_judged().judged[0]
    assert judged.right and judged.acted is not None


def test_the_check_fails_a_straggler_that_got_a_drain(monkeypatch):
    software = advice._software

    def draining(root, seen):
        found = software(root, seen)
        return [Action(DRAIN, "wrong", a.evidence, node=a.node, gpu=a.gpu, rank=a.rank)
                if a.kind == WATCH else a for a in found]

    monkeypatch.setattr(advice, "_software", draining)
    judged = straggler_judged().judged[0]
    assert not judged.right and judged.wrong[0].endswith("drain gpu-node-001 (straggler 1.45x, "
                                                         "20 s; no hardware evidence)")


def test_a_drain_on_another_node_is_wrong_for_a_fault_of_the_gpu():
    scenario, truths = day_scenario(3, RANKS, hours=1.5)
    ecc = next(t for t in truths if t.name == "xid 48")
    other = "gpu-node-000" if ecc.node != "gpu-node-000" else "gpu-node-001"
    judge = Judge([ecc], SimCluster(RANKS // 8, 8, 0, scenario).rank_map, scenario.loop_seconds)
    judge.see(ecc.fault.start + 2, SimpleNamespace(anomalies=(), actions=(
        Action(DRAIN, "r", "e", node=other, gpu=0, rank=0),)))
    assert not judge.judged[0].right and judge.judged[0].acted is None


def test_a_day_draws_every_effect_and_several_xids():
    scenario, truths = day_scenario(1, 64)
    assert scenario.loop_seconds == 86400
    effects = {t.fault.effect for t in truths}
    assert effects == {"thermal_throttle", "straggler", "nvlink_drop", "ecc_dbe", "xid",
                       "rank_death", "collective_hang", "job_stall", "loss_divergence"}
    codes = {t.fault.params["code"]: t.hardware for t in truths if t.fault.effect == "xid"}
    assert len(codes) >= 10 and not codes[13] and codes[79]
    assert any(t.fault.params.get("remap_failure") for t in truths)
    assert len(CASES) <= len(truths) <= 120


def test_the_demos_loop_twice_gets_every_action_right():
    scenario, truths = demo_truths(8, laps=2)
    judge = judge_run(scenario, truths, 8, seed=7)
    assert {j.truth.name for j in judge.judged if j.truth.hardware} == {
        "ecc_dbe", "nvlink_drop", "xid 79", "xid 94"}
    assert [j.truth.name for j in judge.judged if not j.right] == []
    assert all((j.delay_polls or 0) <= 1 for j in judge.judged)
    assert not judge.stray
