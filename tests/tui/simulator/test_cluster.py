"""The simulated cluster: healthy readings, determinism, and every scripted fault."""

from __future__ import annotations

import itertools
import math
import re
import statistics
import time
from pathlib import Path

import pytest
from ranktop.tui.simulator.cluster import METRICS, SimCluster
from ranktop.tui.simulator.scenario import Fault, Scenario, load_scenario

CONFIG = Path(__file__).resolve().parents[3] / "config"
FLEET_SCENARIOS = CONFIG / "fleet"
SHIPPED = load_scenario(CONFIG / "scenario.toml")
HEALTHY_T = 2.0


@pytest.fixture(scope="module")
def sim() -> SimCluster:
    return SimCluster(nodes=64, gpus_per_node=8, seed=0, scenario=SHIPPED)


def median(series: list[float], skip: tuple[int, ...] = ()) -> float:
    return statistics.median(v for i, v in enumerate(series) if i not in skip and v == v)


def is_nan(value: float) -> bool:
    return value != value


# --- identity and determinism ----------------------------------------------------------------

def test_rank_map_hosts_and_uuids(sim: SimCluster) -> None:
    ranks = sim.rank_map.ranks
    assert len(ranks) == 512 and sim.rank_map.source == "simulated"
    assert sim.rank_map.hosts[0] == "gpu-node-000" and sim.rank_map.hosts[-1] == "gpu-node-063"
    assert (ranks[37].host, ranks[37].gpu, ranks[37].node) == ("gpu-node-004", 5, 4)
    uuid = re.compile(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    assert all(uuid.fullmatch(r.uuid) for r in ranks)
    assert len({r.uuid for r in ranks}) == 512
    assert sim.job_name == "llama-70b-pretrain"


def test_host_names_widen_past_a_thousand_nodes() -> None:
    hosts = SimCluster(nodes=1200, gpus_per_node=1, scenario=SHIPPED).rank_map.hosts
    assert (hosts[0], hosts[-1]) == ("gpu-node-0000", "gpu-node-1199")


def test_same_arguments_give_identical_frames() -> None:
    one = SimCluster(nodes=4, gpus_per_node=8, seed=7, scenario=SHIPPED)
    two = SimCluster(nodes=4, gpus_per_node=8, seed=7, scenario=SHIPPED)
    assert one.rank_map == two.rank_map
    for t in (0.0, 42.37, 190.0, 270.5):
        a, b = one.frame_at(t), two.frame_at(t)
        assert repr(a.values) == repr(b.values) and a.job == b.job and a.time == t


def test_different_seeds_differ() -> None:
    one = SimCluster(nodes=4, gpus_per_node=8, seed=1, scenario=SHIPPED)
    two = SimCluster(nodes=4, gpus_per_node=8, seed=2, scenario=SHIPPED)
    a, b = one.frame_at(3.0).values, two.frame_at(3.0).values
    # per-GPU offsets, per-poll noise and per-step noise all follow the seed
    for metric in ("temperature", "sm_clock", "step_time"):
        assert a[metric] != b[metric], metric
    assert one.rank_map.ranks[0].uuid != two.rank_map.ranks[0].uuid


def test_different_times_have_different_noise(sim: SimCluster) -> None:
    first, later = sim.frame_at(1.0), sim.frame_at(2.0)
    assert first.values["temperature"] != later.values["temperature"]
    assert first.values["power"] != later.values["power"]
    # a second lap of the loop has the same faults but fresh noise
    assert sim.frame_at(301.0).values["temperature"] != first.values["temperature"]


def test_warm_gpus_stay_warm(sim: SimCluster) -> None:
    temps = [sim.frame_at(HEALTHY_T + k).values["temperature"] for k in range(3)]
    warmest = max(range(512), key=lambda r: temps[0][r])
    coolest = min(range(512), key=lambda r: temps[0][r])
    assert all(t[warmest] > t[coolest] + 3 for t in temps)


# --- healthy readings ------------------------------------------------------------------------

def test_every_metric_for_every_rank() -> None:
    for nodes, gpus in ((64, 8), (2, 4)):
        frame = SimCluster(nodes, gpus, scenario=SHIPPED).frame_at(HEALTHY_T)
        assert set(frame.values) == set(METRICS) == {
            "sm_active", "gpu_util", "temperature", "power", "sm_clock", "throttle_reasons",
            "nvlink_tx", "nvlink_rx", "nvlink", "memory_used", "ecc_dbe", "xid",
            "recovery_action", "step_time", "compute_time", "collective_time", "bus_bandwidth",
            "remapped_rows",
            "remapped_rows_correctable", "row_remap_failure", "pcie_replay", "nvlink_errors",
            "nvlink_replay",
        }
        assert all(len(series) == nodes * gpus for series in frame.values.values())
        assert set(frame.job) == {"step", "loss", "tokens_per_s", "checkpoint_step"}


def test_healthy_values_are_plausible(sim: SimCluster) -> None:
    frame = sim.frame_at(HEALTHY_T)
    v = frame.values
    assert sim.active_faults(HEALTHY_T) == []
    ranges = {
        "sm_active": (82, 94), "gpu_util": (97, 100), "temperature": (57, 67),
        "power": (610, 690), "sm_clock": (1950, 1980), "nvlink_tx": (140e9, 160e9),
        "nvlink_rx": (140e9, 160e9), "memory_used": (70400, 71600), "compute_time": (0.78, 0.82),
        "step_time": (1.09, 1.15),
    }
    for metric, (low, high) in ranges.items():
        assert all(low <= x <= high for x in v[metric]), metric
    assert all(x == 0 for x in v["throttle_reasons"] + v["ecc_dbe"])
    assert all(is_nan(x) for x in v["xid"])
    assert v["nvlink"][9] == pytest.approx(v["nvlink_tx"][9] + v["nvlink_rx"][9])
    step = median(v["step_time"])
    assert max(v["step_time"]) / min(v["step_time"]) < 1.006  # one synchronous step
    assert 1.8 < frame.job["loss"] < 2.5
    assert frame.job["tokens_per_s"] == pytest.approx(4194304 / step, rel=0.01)


def test_memory_is_stable_per_rank(sim: SimCluster) -> None:
    assert sim.frame_at(1.0).values["memory_used"] == sim.frame_at(3.3).values["memory_used"]


def test_step_never_decreases(sim: SimCluster) -> None:
    steps = [sim.frame_at(k / 4).job["step"] for k in range(0, 4 * 330)]
    assert all(a <= b for a, b in itertools.pairwise(steps))
    assert steps[-1] - steps[0] > 150


# --- the scripted faults ---------------------------------------------------------------------

def test_thermal_throttle(sim: SimCluster) -> None:
    before, ramping, hot = sim.frame_at(5.0), sim.frame_at(10.0), sim.frame_at(40.0)
    assert before.values["temperature"][37] < 68 and before.values["throttle_reasons"][37] == 0
    assert 66 < ramping.values["temperature"][37] < 84
    assert ramping.values["throttle_reasons"][37] == 0
    v = hot.values
    assert v["temperature"][37] > 84
    assert int(v["throttle_reasons"][37]) & 0x20 and int(v["throttle_reasons"][37]) & 0x40
    assert v["sm_clock"][37] < 1500 and v["power"][37] < 560
    assert v["compute_time"][37] > 1.25 * median(v["compute_time"], skip=(37,))
    assert max(v["temperature"][:37] + v["temperature"][38:]) < 75
    assert sum(1 for x in v["throttle_reasons"] if x) == 1
    # synchronous: every rank's step slows with the hot one
    assert min(v["step_time"]) > 1.15 * median(before.values["step_time"])


def test_straggler_shows_in_compute_and_sm_not_step_time(sim: SimCluster) -> None:
    before, during = sim.frame_at(49.0), sim.frame_at(80.0)
    assert before.values["compute_time"][201] < 1.05 * median(before.values["compute_time"])
    v = during.values
    assert v["compute_time"][201] >= 1.35 * median(v["compute_time"], skip=(201,))
    assert abs(v["step_time"][201] / median(v["step_time"]) - 1) < 0.01
    assert median(v["step_time"]) > 1.25 * median(sim.frame_at(HEALTHY_T).values["step_time"])
    assert v["sm_active"][201] > 93
    assert v["sm_active"][201] == max(v["sm_active"])
    assert median(v["sm_active"], skip=(201,)) < 75  # the others wait in collectives


def test_a_straggler_waits_least_in_collectives_and_its_peers_more(sim: SimCluster) -> None:
    healthy, v = sim.frame_at(HEALTHY_T).values, sim.frame_at(80.0).values
    collective = v["collective_time"]
    assert collective[201] == min(collective)
    assert collective[201] < 0.7 * median(collective, skip=(201,))
    assert median(collective, skip=(201,)) > 1.5 * median(healthy["collective_time"])
    assert median(v["bus_bandwidth"], skip=(201,)) < 0.7 * median(healthy["bus_bandwidth"])
    # a step is its compute and its collectives
    assert v["step_time"][5] == pytest.approx(v["compute_time"][5] + collective[5])


def test_nvlink_drop_hits_the_whole_node(sim: SimCluster) -> None:
    node = range(296, 304)  # rank 300 is gpu-node-037, GPUs 0..7
    assert sim.rank_map.ranks[300].node == 37
    before, during = sim.frame_at(94.0), sim.frame_at(120.0)
    healthy = median(before.values["nvlink"])
    assert min(before.values["nvlink"][r] for r in node) > 0.8 * healthy
    v = during.values
    others = median(v["nvlink"], skip=tuple(node))
    for metric in ("nvlink", "nvlink_tx", "nvlink_rx"):
        assert max(v[metric][r] for r in node) < 0.4 * median(v[metric], skip=tuple(node))
    assert min(v["nvlink"][r] for r in range(512) if r not in node) > 0.8 * others
    assert median(v["step_time"]) > 1.05 * median(sim.frame_at(HEALTHY_T).values["step_time"])
    bus = v["bus_bandwidth"]
    assert max(bus[r] for r in node) < 0.4 * median(bus, skip=tuple(node))


def test_ecc_double_bit_error(sim: SimCluster) -> None:
    assert sum(sim.frame_at(129.0).values["ecc_dbe"]) == 0
    ecc = sim.frame_at(150.0).values["ecc_dbe"]
    assert ecc[128] == 1 and sum(ecc) == 1
    assert sum(sim.frame_at(171.0).values["ecc_dbe"]) == 0


def test_xid_latches_the_code(sim: SimCluster) -> None:
    assert all(is_nan(x) for x in sim.frame_at(169.0).values["xid"])
    xid = sim.frame_at(171.0).values["xid"]
    assert xid[455] == 79
    assert all(is_nan(x) for r, x in enumerate(xid) if r != 455)


def test_rank_death_hangs_the_job(sim: SimCluster) -> None:
    alive = sim.frame_at(171.5)
    assert alive.ranks_up(512) == [True] * 512
    hung, later = sim.frame_at(190.0), sim.frame_at(215.0)
    assert all(is_nan(series[455]) for series in hung.values.values())
    assert hung.ranks_up(512) == [r != 455 for r in range(512)]
    v = hung.values
    skip = (455,)
    assert min(x for r, x in enumerate(v["gpu_util"]) if r != 455) >= 99.5
    assert median(v["sm_active"], skip) < 15 and median(v["power"], skip) < 300
    assert max(x for x in v["nvlink"] if x == x) < 1e9
    assert hung.job["step"] == later.job["step"] == sim.frame_at(172.5).job["step"]
    assert hung.job["tokens_per_s"] == 0
    assert repr(v["step_time"]) == repr(later.values["step_time"])  # frozen
    # The last step to complete waited for the slow node and crawled over the bad NVLink.
    healthy = median(sim.frame_at(HEALTHY_T).values["step_time"])
    slow_step = (0.8 * 1.45 + 0.32) * 1.08
    assert median(v["step_time"]) == pytest.approx(slow_step, rel=0.02)
    assert median(v["step_time"]) > 1.3 * healthy
    assert v["compute_time"][201] > 1.35 * median(v["compute_time"], skip=(201, 455))
    restarted = (sim.frame_at(222.0), sim.frame_at(230.0))
    assert restarted[1].job["step"] > restarted[0].job["step"] > later.job["step"]
    assert restarted[0].ranks_up(512) == [True] * 512 and restarted[0].job["tokens_per_s"] > 0


def test_job_stall(sim: SimCluster) -> None:
    before, stalled, late = sim.frame_at(231.0), sim.frame_at(245.0), sim.frame_at(256.0)
    assert median(before.values["sm_active"]) > 80
    v = stalled.values
    assert max(v["sm_active"]) < 5 and max(v["gpu_util"]) < 2 and median(v["power"]) < 150
    assert max(v["nvlink"]) < 1e9
    assert median(late.values["temperature"]) < 50 < median(before.values["temperature"])
    assert stalled.job["step"] == late.job["step"] == sim.frame_at(233.0).job["step"]
    assert stalled.job["tokens_per_s"] == 0
    assert stalled.values["step_time"] == late.values["step_time"]
    first_after = sim.frame_at(257.3)
    assert 24 < median(first_after.values["step_time"]) < 28  # about the stall's length
    assert median(first_after.values["sm_active"]) > 80
    assert median(sim.frame_at(261.0).values["step_time"]) < 1.2


def test_loss_divergence(sim: SimCluster) -> None:
    assert sim.frame_at(261.0).job["loss"] < 2.5
    losses = [sim.frame_at(t).job["loss"] for t in (266.0, 276.0, 286.0, 298.0)]
    assert losses[0] > 3
    assert all(a < b for a, b in itertools.pairwise(losses))
    assert losses[-1] > 6
    assert sim.frame_at(301.0).job["loss"] < 2.5  # the next lap starts healthy


def test_active_faults(sim: SimCluster) -> None:
    assert sim.active_faults(0.0) == []
    assert [(f.effect, f.rank) for f in sim.active_faults(40.0)] == [("thermal_throttle", 37)]
    # The rank dies while the slow node and the bad NVLink are still there.
    assert [(f.effect, f.rank) for f in sim.active_faults(180.0)] == [
        ("straggler", 201), ("nvlink_drop", 300), ("xid", 455), ("rank_death", 455),
    ]
    assert [(f.effect, f.rank) for f in sim.active_faults(60.0)] == [
        ("thermal_throttle", 37), ("straggler", 201),
    ]
    assert [(f.effect, f.rank) for f in sim.active_faults(236.0)] == [("job_stall", None)]
    # A contained ECC error on another GPU while the data loader still waits.
    assert [(f.effect, f.rank) for f in sim.active_faults(240.0)] == [
        ("job_stall", None), ("xid", 410),
    ]


def test_the_scenario_loops(sim: SimCluster) -> None:
    for fault in SHIPPED.faults:
        mid = fault.start + fault.duration / 2
        assert fault in sim.active_faults(mid)
        assert sim.active_faults(mid) == sim.active_faults(mid + 300) == sim.active_faults(
            mid + 3000
        )
        assert fault not in sim.active_faults(fault.start - 0.5)
    lap = sim.frame_at(340.0).values
    assert lap["temperature"][37] > 84 and lap["throttle_reasons"][37] != 0
    assert is_nan(sim.frame_at(490.0).values["sm_active"][455])


def test_small_cluster_wraps_fault_ranks() -> None:
    small = SimCluster(nodes=2, gpus_per_node=4, scenario=SHIPPED)
    ranks = {f.effect: f.rank for f in small.active_faults(180.0)}
    assert ranks == {"straggler": 201 % 8, "nvlink_drop": 300 % 8, "xid": 455 % 8,
                     "rank_death": 455 % 8}
    hot = small.frame_at(40.0).values
    assert hot["temperature"][37 % 8] > 84 and hot["throttle_reasons"][37 % 8] != 0
    assert is_nan(small.frame_at(190.0).values["power"][7])
    dropped = small.frame_at(120.0).values["nvlink"]  # rank 300 -> 4, on node 1
    assert max(dropped[4:]) < 0.4 * min(dropped[:4])


def test_straggler_factor_comes_from_the_scenario() -> None:
    scenario = Scenario("custom", 100.0, 2.0, 1000, (
        Fault("straggler", 3, 10.0, 50.0, {"factor": 2.0}),
    ))
    v = SimCluster(nodes=1, gpus_per_node=8, scenario=scenario).frame_at(30.0).values
    assert v["compute_time"][3] / median(v["compute_time"], skip=(3,)) == pytest.approx(2, rel=0.03)
    assert median(v["step_time"]) == pytest.approx(2.0 * (2.0 * 0.8 / 1.12 + 1 - 0.8 / 1.12),
                                                   rel=0.02)


def test_a_cluster_needs_gpus() -> None:
    with pytest.raises(ValueError):
        SimCluster(nodes=0, scenario=SHIPPED)


def frame_seconds(nodes: int) -> float:
    """The CPU seconds a frame of ``nodes`` nodes takes to make: the thread's own time, which
    other processes on a busy machine do not add to as they do to the wall clock's."""
    cluster = SimCluster(nodes=nodes, gpus_per_node=8, scenario=SHIPPED)
    started = time.thread_time()
    frame = cluster.frame_at(80.0)
    took = time.thread_time() - started
    assert len(frame.values["sm_active"]) == nodes * 8
    return took


def test_a_frame_costs_in_proportion_to_the_ranks() -> None:
    # 16 times the ranks, at most about 16 times the cost (a ratio from one run).
    small = min(frame_seconds(128) for _ in range(3))
    large = min(frame_seconds(2048) for _ in range(3))
    assert large / small < 40


def steps_tick_by_tick(cluster: SimCluster) -> list[float]:
    """Steps completed at every tick of the loop, the pace worked out at every tick."""
    from ranktop.tui.simulator.cluster import TICKS_PER_SECOND
    done, progress = 0.0, [0.0]
    for tick in range(math.ceil(cluster._loop * TICKS_PER_SECOND)):
        loop_time = tick / TICKS_PER_SECOND
        faults = [f for f in cluster._faults if f.active_at(loop_time)]
        done += 1 / (TICKS_PER_SECOND * cluster._job_state(loop_time, faults).pace)
        progress.append(done)
    return progress


@pytest.mark.parametrize("scenario", [None, *sorted(FLEET_SCENARIOS.glob("*.toml"))],
                         ids=lambda path: "demo" if path is None else path.stem)
def test_the_steps_worked_out_by_stretches_are_those_worked_out_tick_by_tick(scenario):
    # A fleet job's loop is an hour of ticks: its pace is worked out once for each stretch
    # between a fault's start or end and a hot GPU's throttling, to the same sums.
    cluster = SimCluster(4, 8, 3, load_scenario(scenario) if scenario else load_scenario())
    assert cluster._integrate_steps() == steps_tick_by_tick(cluster)
