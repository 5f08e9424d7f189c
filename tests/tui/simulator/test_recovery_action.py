"""The GPU's recovery action (DCGM field 1523) in the simulated frames and the scrape."""

from __future__ import annotations

import math

import pytest
from prometheus_client.parser import text_string_to_metric_families
from ranktop.tui.core.xid import (
    RECOVERY_DRAIN_AND_RESET,
    RECOVERY_DRAIN_P2P,
    RECOVERY_GPU_RESET,
    RECOVERY_NONE,
)
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.exporter import ExportOptions, render_metrics
from ranktop.tui.simulator.scenario import Fault, Scenario, load_scenario

FAMILY = "DCGM_FI_DEV_GPU_RECOVERY_ACTION"


@pytest.fixture(scope="module")
def demo() -> SimCluster:
    return SimCluster(nodes=64, gpus_per_node=8, seed=0, scenario=load_scenario())


def one_fault(effect: str, **params: object) -> SimCluster:
    fault = Fault(effect=effect, rank=3, start=10.0, duration=20.0, params=params)
    scenario = Scenario(name="t", loop_seconds=60.0, base_step_seconds=1.0,
                        tokens_per_step=1000, faults=(fault,))
    return SimCluster(nodes=2, gpus_per_node=4, seed=0, scenario=scenario)


def recovery(sim: SimCluster, t: float) -> list[float]:
    return sim.frame_at(t).values["recovery_action"]


def test_no_gpu_asks_for_anything_while_the_demo_is_healthy(demo: SimCluster) -> None:
    assert set(recovery(demo, 3.0)) == {RECOVERY_NONE}


def test_the_gpu_that_falls_off_the_bus_asks_for_a_reset_until_its_rank_dies(demo) -> None:
    actions = recovery(demo, 171.0)
    assert actions[455] == RECOVERY_GPU_RESET
    assert sum(1 for a in actions if a != RECOVERY_NONE) == 1
    assert math.isnan(recovery(demo, 180.0)[455])  # its series are gone


def test_an_uncorrectable_ecc_error_asks_for_a_reset(demo: SimCluster) -> None:
    assert recovery(demo, 129.0)[128] == RECOVERY_NONE
    assert recovery(demo, 131.0)[128] == RECOVERY_GPU_RESET
    assert recovery(demo, 175.0)[128] == RECOVERY_NONE  # the fault is over


def test_a_contained_ecc_error_asks_for_a_reset_without_a_pcie_burst(demo) -> None:
    frame = demo.frame_at(241.0).values
    assert frame["xid"][410] == 94 and recovery(demo, 241.0)[410] == RECOVERY_GPU_RESET
    assert frame["pcie_replay"][410] == demo.frame_at(239.0).values["pcie_replay"][410]
    assert not math.isnan(frame["sm_active"][410])  # its rank lives on
    assert recovery(demo, 271.0)[410] == RECOVERY_NONE


@pytest.mark.parametrize(("effect", "params", "action"), [
    ("ecc_dbe", {"remap_failure": True}, RECOVERY_DRAIN_AND_RESET),
    ("xid", {"code": 74}, RECOVERY_DRAIN_P2P),
    ("xid", {"code": 95}, RECOVERY_DRAIN_AND_RESET),
    ("xid", {"code": 13}, RECOVERY_NONE),  # an application's fault: the GPU is fine
    ("xid", {"code": 9999}, RECOVERY_NONE),  # a code the table does not know
])
def test_each_fault_asks_for_its_own_action(effect, params, action) -> None:
    sim = one_fault(effect, **params)
    assert recovery(sim, 15.0)[3] == action
    assert recovery(sim, 5.0)[3] == RECOVERY_NONE


def test_the_scrape_carries_the_action_on_every_gpu_in_the_default_profile(demo) -> None:
    parsed = {f.name: f for f in text_string_to_metric_families(render_metrics(demo, 131.0))}
    samples = parsed[FAMILY].samples
    assert len(samples) == 512 + 2  # the other job's two GPUs on gpu-node-056 too
    asking = [s for s in samples if s.value != RECOVERY_NONE]
    assert [(s.labels["UUID"], s.value) for s in asking] == [
        (demo.rank_map.ranks[128].uuid, RECOVERY_GPU_RESET)]


def test_the_stock_profile_has_no_recovery_action(demo) -> None:
    text = render_metrics(demo, 131.0, ExportOptions(profile="stock"))
    assert FAMILY not in text
