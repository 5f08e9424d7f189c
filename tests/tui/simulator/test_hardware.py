"""The simulated GPUs' error counters: what raises them, and that they only go up."""

from __future__ import annotations

from pathlib import Path

import pytest
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.hardware import COUNTERS
from ranktop.tui.simulator.scenario import Fault, Scenario, load_scenario

SHIPPED = load_scenario(Path(__file__).resolve().parents[3] / "config" / "scenario.toml")
NODE_37 = range(296, 304)  # rank 300's node


@pytest.fixture(scope="module")
def sim() -> SimCluster:
    return SimCluster(nodes=64, gpus_per_node=8, seed=0, scenario=SHIPPED)


def counter(sim: SimCluster, name: str, t: float, rank: int) -> float:
    return sim.frame_at(t).values[name][rank]


def test_counters_never_fall_over_two_laps() -> None:
    sim = SimCluster(nodes=8, gpus_per_node=8, seed=0, scenario=SHIPPED)  # every fault wraps in
    last = {name: [0.0] * 64 for name in COUNTERS}
    rises = 0
    for k in range(0, 620, 2):
        values = sim.frame_at(float(k)).values
        for name in COUNTERS:
            for rank, value in enumerate(values[name]):
                if value == value:  # the dead rank has no value at all
                    assert value >= last[name][rank], (name, rank, k)
                    rises += value > last[name][rank]
                    last[name][rank] = value
    assert rises > 100  # they did move


def test_an_uncorrectable_ecc_error_adds_a_remapped_row_that_stays(sim: SimCluster) -> None:
    assert counter(sim, "remapped_rows", 129.0, 128) == 0
    assert counter(sim, "remapped_rows", 131.0, 128) == 1
    after = sim.frame_at(200.0)
    assert after.values["ecc_dbe"][128] == 0  # the volatile counter went with the reset...
    assert after.values["remapped_rows"][128] == 1  # ...the remapped row did not
    assert sum(v for v in after.values["remapped_rows"] if v == v) == 1
    assert counter(sim, "remapped_rows", 420.0, 128) == 1  # next lap, before the error
    assert counter(sim, "remapped_rows", 431.0, 128) == 2  # the same GPU fails again
    assert max(sim.frame_at(431.0).values["row_remap_failure"]) == 0


def test_a_failed_remap_sets_the_flag_for_good_and_adds_no_row() -> None:
    scenario = Scenario("remap", 100.0, 1.12, 1000, (
        Fault("ecc_dbe", 3, 40.0, 10.0, {"remap_failure": True}),
    ))
    sim = SimCluster(1, 8, scenario=scenario)
    assert counter(sim, "row_remap_failure", 39.0, 3) == 0
    assert [counter(sim, "row_remap_failure", t, 3) for t in (41.0, 60.0, 110.0)] == [1, 1, 1]
    assert max(sim.frame_at(60.0).values["row_remap_failure"][:3]) == 0
    assert counter(sim, "remapped_rows", 60.0, 3) == 0


def test_the_gpu_falling_off_the_bus_replays_on_pcie_first(sim: SimCluster) -> None:
    before, after = counter(sim, "pcie_replay", 169.9, 455), counter(sim, "pcie_replay", 170.5, 455)
    assert 150 <= after - before <= 400
    others = [r for r in range(512) if r != 455]
    lap = sim.frame_at(169.9).values["pcie_replay"], sim.frame_at(175.0).values["pcie_replay"]
    assert all(lap[0][r] == lap[1][r] for r in others)


def test_an_nvlink_drop_raises_crc_errors_on_the_bad_gpu_most(sim: SimCluster) -> None:
    before, during, after = sim.frame_at(94.0), sim.frame_at(140.0), sim.frame_at(186.0)
    grown = {r: during.values["nvlink_errors"][r] - before.values["nvlink_errors"][r]
             for r in range(512)}
    assert grown[300] > 1000  # ~45 s at 30-50 errors a second
    peers = [grown[r] for r in NODE_37 if r != 300]
    assert all(0 < g < grown[300] / 5 for g in peers)
    assert all(grown[r] == 0 for r in range(512) if r not in NODE_37)
    assert during.values["nvlink_replay"][300] > before.values["nvlink_replay"][300]
    # the link retrained at 185 s: no more errors
    assert after.values["nvlink_errors"][300] == counter(sim, "nvlink_errors", 240.0, 300)


def test_some_gpus_carry_old_errors_that_never_move() -> None:
    one, other = (SimCluster(64, 8, seed=s, scenario=SHIPPED) for s in (0, 1))
    start = one.frame_at(0.0).values
    old_remaps = [r for r, v in enumerate(start["remapped_rows_correctable"]) if v > 0]
    old_replays = [r for r, v in enumerate(start["pcie_replay"]) if v > 0]
    assert 2 <= len(old_remaps) <= 40 and 10 <= len(old_replays) <= 90
    later = one.frame_at(60.0).values
    assert later["remapped_rows_correctable"] == start["remapped_rows_correctable"]
    assert start["pcie_replay"] != other.frame_at(0.0).values["pcie_replay"]  # from the seed
    assert max(start["remapped_rows"]) == 0 and max(start["row_remap_failure"]) == 0


def test_the_dead_rank_has_no_counters(sim: SimCluster) -> None:
    values = sim.frame_at(190.0).values
    assert all(values[name][455] != values[name][455] for name in COUNTERS)
