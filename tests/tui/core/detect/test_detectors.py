"""Each detector with its fault and without it, on synthetic frames and on the simulator."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from ranktop.tui.core import ranks
from ranktop.tui.core.config_values import DetectSettings
from ranktop.tui.core.detect.detectors import RATE_WINDOW_SECONDS, Detectors
from ranktop.tui.core.model import Frame, RankMap
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.scenario import load_scenario

N, G = 32, 8
RANK_MAP = RankMap.grid([f"h{i}" for i in range(N // G)], G, "test")
SETTINGS = DetectSettings()


def healthy(t: float, **changes) -> Frame:
    """A calm frame; ``changes`` maps metric -> {rank: value} (or "job" -> {key: value})."""
    values = {
        "temperature": [60.0 + (r % 5) for r in range(N)],
        "throttle_reasons": [0.0] * N,
        "sm_clock": [1980.0] * N,
        "sm_active": [88.0 + (r % 3) for r in range(N)],
        "compute_time": [0.80 + 0.002 * (r % 4) for r in range(N)],
        "nvlink": [300e9 + 1e9 * (r % 3) for r in range(N)],
        "ecc_dbe": [0.0] * N,
        "xid": [math.nan] * N,
    }
    if "collective_time" in changes:  # only where NCCL's Inspector exports it
        values["collective_time"] = [math.nan] * N
    job = {"loss": 2.1, "tokens_per_s": 3.7e6}
    for metric, per_rank in changes.items():
        target = job if metric == "job" else values[metric]
        for key, value in per_rank.items():
            target[key] = value
    return Frame(time=t, values=values, job=job)


def run(frames, pending: bool = False) -> dict[tuple, float]:
    """When each anomaly was first confirmed (with ``pending``, first shown at all)."""
    detectors = Detectors(SETTINGS, RANK_MAP)
    first: dict[tuple, float] = {}
    for frame in frames:
        for anomaly in detectors.update(frame):
            if pending or anomaly.confirmed:
                first.setdefault(anomaly.key, frame.time)
    return first


def times(seconds: float, step: float = 2.0):
    return [i * step for i in range(int(seconds / step) + 1)]


def test_a_calm_job_raises_nothing():
    assert run(healthy(t) for t in times(600)) == {}


def test_thermal_is_pending_at_once_and_confirmed_after_its_time():
    frames = [healthy(t, temperature={5: 88.0}, throttle_reasons={5: 32.0},
                      sm_clock={5: 1400.0}) for t in times(20)]
    detectors = Detectors(SETTINGS, RANK_MAP)
    reported = [detectors.update(f) for f in frames]
    first = reported[0][0]  # one hot poll shows, but is not yet a fault
    assert (first.kind, first.rank, first.pending) == ("thermal", 5, True)
    assert first.state == "pending 0 s of 10 s"
    anomaly = reported[-1][0]
    assert anomaly.confirmed and anomaly.since == first.since == 0.0
    assert "88 °C" in anomaly.summary and "SW thermal" in anomaly.summary
    assert "SM clock 1400 MHz (median 1980)" in anomaly.summary
    assert [a.confirmed for a in (r[0] for r in reported)] == [t >= 10 for t in times(20)]


def test_the_gpus_own_hw_thermal_slowdown_confirms_at_once_and_says_so():
    detectors = Detectors(SETTINGS, RANK_MAP)
    anomaly = detectors.update(healthy(0, temperature={5: 88.0}, throttle_reasons={5: 96.0}))[0]
    assert anomaly.confirmed and anomaly.rule == "HW thermal slowdown is set"
    assert anomaly.state == "confirmed: HW thermal slowdown is set"


def test_a_brief_spike_is_only_ever_pending_and_starts_over():
    frames = [healthy(t, temperature={5: 90.0} if t < 6 else {}) for t in times(30)]
    assert run(frames) == {}
    assert run(frames, pending=True) == {("thermal", 5): 0.0}


def test_one_rank_stalling_is_a_rank_stall_and_everyone_is_a_job_stall():
    one = run(healthy(t, sm_active={3: 5.0}) for t in times(70))
    assert ("sm_stall", 3) in one and ("job_stall", None) not in one
    everyone = run(healthy(t, sm_active=dict.fromkeys(range(N), 3.0)) for t in times(30))
    assert ("job_stall", None) in everyone
    assert not any(kind == "sm_stall" for kind, _ in everyone)


def test_a_straggler_is_named_by_its_compute_factor_not_flagged_by_noise():
    anomalies = Detectors(SETTINGS, RANK_MAP)
    last = []
    for t in times(40):
        last = anomalies.update(healthy(t, compute_time={9: 1.16}))
    straggler = next(a for a in last if a.kind == "straggler")
    assert straggler.rank == 9
    assert straggler.summary.startswith("compute 1.44x the median (+44%), far outside")
    assert "one GPU (a bad worker), steady 40 s" in straggler.summary
    assert run(healthy(t, compute_time={9: 0.84}) for t in times(60)) == {}


def test_without_compute_time_sm_activity_finds_the_straggler():
    def frame(t):
        f = healthy(t, sm_active={**dict.fromkeys(range(N), 66.0), 9: 96.0})
        return replace(f, values={k: v for k, v in f.values.items() if k != "compute_time"})

    assert ("straggler", 9) in run(frame(t) for t in times(40))


def test_a_node_with_low_nvlink_is_named_once_by_its_first_rank():
    slow = dict.fromkeys(range(8, 16), 90e9)
    found = run(healthy(t, nvlink=slow) for t in times(30))
    assert list(found) == [("nvlink", 8)]


def test_a_node_with_low_nvlink_names_its_gpus_worst_first():
    slow = {**dict.fromkeys(range(8, 16), 90e9), 13: 20e9, 10: 40e9}
    detectors = Detectors(SETTINGS, RANK_MAP)
    for t in times(30):
        found = [a for a in detectors.update(healthy(t, nvlink=slow)) if a.kind == "nvlink"]
    (nvlink,) = found
    assert nvlink.rank == 8  # the node's drop stays on the node
    assert nvlink.summary.endswith("; lowest: rank 13 20 GB/s, rank 10 40 GB/s, rank 8 90 GB/s")


def test_ecc_and_xid_are_confirmed_at_once_with_the_xids_meaning_and_keep_their_start():
    detectors = Detectors(SETTINGS, RANK_MAP)
    detectors.update(healthy(0, ecc_dbe={4: 1.0}, xid={7: 79.0}))
    anomalies = detectors.update(healthy(2, ecc_dbe={4: 1.0}, xid={7: 79.0}))
    by_kind = {a.kind: a for a in anomalies}
    assert by_kind["ecc"].rank == 4 and by_kind["ecc"].severity == "critical"
    assert by_kind["xid"].rank == 7 and "fallen off the bus" in by_kind["xid"].summary
    assert all(a.confirmed and a.since == 0 for a in anomalies)


def test_a_rank_that_dies_after_an_xid_is_down_with_the_xid_named():
    gone = {metric: {7: math.nan} for metric in healthy(0).values}
    detectors = Detectors(SETTINGS, RANK_MAP)
    detectors.update(healthy(0))
    detectors.update(healthy(2, xid={7: 79.0}))
    down = {a.kind: a for a in detectors.update(healthy(4, **gone)) if a.rank == 7}
    assert {kind: a.since for kind, a in down.items()} == {"missing": 4, "xid": 2}
    assert down["missing"].summary == ("not reporting since 00:00:04 (XID 79: GPU has fallen"
                                       " off the bus (2 s before), then its series vanished)")
    record = detectors.liveness.down[7]
    assert record.last_values["temperature"] == 62.0 and record.last_seen == 2
    # Its series gone, the GPU has not recovered: the XID stays while the rank is down,
    # and once the rank is back without it (a restart does not reset a GPU), marked so.
    for t in (6, 8):
        still = [a.kind for a in detectors.update(healthy(t, **gone)) if a.rank == 7]
        assert "xid" in still
    (back,) = [a for a in detectors.update(healthy(10)) if a.kind == "xid"]
    assert back.summary.endswith("(before the restart)") and back.since == 2


def test_an_applications_xid_ends_when_its_rank_is_back():
    gone = {metric: {7: math.nan} for metric in healthy(0).values}
    detectors = Detectors(SETTINGS, RANK_MAP)
    detectors.update(healthy(0))
    detectors.update(healthy(2, xid={7: 13.0}))
    assert "xid" in [a.kind for a in detectors.update(healthy(4, **gone)) if a.rank == 7]
    assert [a for a in detectors.update(healthy(6)) if a.kind == "xid"] == []


def test_a_rank_map_that_grows_keeps_every_timer():
    detectors = Detectors(SETTINGS, RANK_MAP)
    hot = {"temperature": {5: 88.0}, "throttle_reasons": {5: 32.0}}
    for t in times(6):
        detectors.update(healthy(t, **hot))
    bigger = RankMap.grid([f"h{i}" for i in range(N // G + 1)], G, "test, grown")
    anomaly = next(a for a in detectors.update(healthy(8, **hot), bigger) if a.rank == 5)
    assert anomaly.since == 0 and anomaly.held == 8


def test_a_rank_that_vanishes_is_missing_one_never_seen_is_not():
    gone = {metric: {6: math.nan} for metric in healthy(0).values}
    frames = [healthy(0), healthy(2, **gone)]
    assert ("missing", 6) in run(frames)
    never = run([healthy(0, **gone), healthy(2, **gone)])
    assert ("missing", 6) not in never and ("never_seen", 6) in never


def test_ranks_seen_only_under_a_guessed_map_are_not_called_dead_once_the_job_names_them():
    # Before the job's series appear, ranks are guessed from DCGM's GPUs, any job's: rank 6's
    # place then answers for a GPU the job may never have had. Once the job's labels name
    # the ranks, a rank that has never reported is not yet known, not lost.
    guessed = RankMap.grid([f"h{i}" for i in range(N // G)], G, ranks.FROM_DCGM)
    gone = {metric: {6: math.nan} for metric in healthy(0).values}
    detectors = Detectors(SETTINGS, guessed)
    detectors.update(healthy(0))
    found = {(a.kind, a.rank) for a in detectors.update(healthy(2, **gone), RANK_MAP)}
    assert ("missing", 6) not in found and ("never_seen", 6) in found
    # a rank the job's own labels saw, and that then vanished, is missing as before
    found = {(a.kind, a.rank) for a in detectors.update(healthy(4, **{
        metric: {6: math.nan, 7: math.nan} for metric in healthy(0).values}))}
    assert ("missing", 7) in found and ("never_seen", 6) in found


def test_loss_divergence_needs_a_rise_beyond_the_threshold():
    rising = [healthy(t, job={"loss": 2.1 if t < 20 else 2.1 + 0.05 * t}) for t in times(60)]
    assert ("loss", None) in run(rising)
    noisy = [healthy(t, job={"loss": 2.1 * (1.02 if t % 4 else 0.98)}) for t in times(120)]
    assert run(noisy) == {}


def test_throughput_drop_is_job_wide_and_sustained():
    frames = [healthy(t, job={"tokens_per_s": 3.7e6 if t < 60 else 0.4e6}) for t in times(100)]
    found = run(frames)
    assert found[("throughput", None)] >= 60 + SETTINGS.throughput_seconds


def test_a_throughput_drop_that_outlasts_a_job_stall_is_raised_once_its_rate_is_past_it():
    idle = {r: 5.0 for r in range(N)}
    stall_end = 90.0
    frames = [healthy(t, job={"tokens_per_s": 3.7e6}) if t < 60 else
              healthy(t, sm_active=idle, job={"tokens_per_s": 0.0}) if t < stall_end else
              healthy(t, job={"tokens_per_s": 0.4e6}) for t in times(200)]
    detectors = Detectors(SETTINGS, RANK_MAP)
    after: dict[float, bool] = {}  # when throughput showed after the stall: confirmed?
    for frame in frames:
        for anomaly in detectors.update(frame):
            if anomaly.kind == "throughput" and frame.time >= stall_end:
                after[frame.time] = anomaly.confirmed
    shown = sorted(after)
    confirmed = [t for t in shown if after[t]]
    # not on the first readings after the stall, whose rate still covers it; then held
    assert shown[0] >= stall_end + RATE_WINDOW_SECONDS - 2.0
    assert confirmed[0] <= stall_end + RATE_WINDOW_SECONDS + SETTINGS.throughput_seconds
    assert confirmed == [t for t in times(200) if t >= confirmed[0]]


@pytest.fixture(scope="module")
def scenario_run():
    """The default scenario polled every 2 s for one loop: each anomaly's (time, since)."""
    cluster = SimCluster(64, 8, 7, load_scenario())
    detectors = Detectors(SETTINGS, cluster.rank_map)
    seen: dict[tuple, list[tuple[float, float]]] = {}
    for t in times(300):
        for anomaly in detectors.update(cluster.frame_at(t)):
            seen.setdefault(anomaly.key, []).append((t, anomaly.since))
    return cluster, seen


def test_no_false_alarm_in_ten_minutes_of_a_healthy_512_rank_cluster():
    cluster = SimCluster(64, 8, 7, replace(load_scenario(), faults=()))
    detectors = Detectors(SETTINGS, cluster.rank_map)
    assert [a for t in times(600) for a in detectors.update(cluster.frame_at(t))] == []


@pytest.mark.parametrize("effect,key", [
    ("thermal_throttle", ("thermal", 37)),
    ("straggler", ("straggler", 201)),
    ("nvlink_drop", ("nvlink", 296)),  # rank 300's node starts at rank 296
    ("ecc_dbe", ("ecc", 128)),
    ("xid", ("xid", 455)),
    ("rank_death", ("missing", 455)),
    ("job_stall", ("job_stall", None)),
    ("loss_divergence", ("loss", None)),
])
def test_every_scripted_fault_is_found_on_its_rank_within_its_window(scenario_run, effect, key):
    cluster, seen = scenario_run
    fault = next(f for f in cluster.scenario.faults if f.effect == effect)
    found = [t for t, since in seen.get(key, []) if since >= fault.start and t < fault.end]
    assert found, f"{effect} was not detected as {key} between {fault.start} and {fault.end} s"


def test_no_straggler_while_the_job_makes_no_progress_its_times_are_frozen():
    detectors = Detectors(SETTINGS, RANK_MAP)
    for t in times(40):
        found = detectors.update(healthy(t, compute_time={9: 1.16}), progressing=False)
        assert not any(a.kind == "straggler" for a in found)


def test_a_throttling_straggler_says_its_clock_throttle_and_temperature():
    detectors = Detectors(SETTINGS, RANK_MAP)
    frame = healthy(0, compute_time={9: 1.16}, temperature={9: 88.0}, sm_clock={9: 1400.0},
                    throttle_reasons={9: 0x20 | 0x01})
    straggler = next(a for a in detectors.update(frame) if a.kind == "straggler")
    assert straggler.summary.endswith(
        "· clock 1400/1980 MHz, throttle: SW thermal, 88 °C (med 62)")


def test_a_straggler_with_nothing_on_its_gpu_says_so():
    assert _straggler_summary().endswith("· nothing on its GPU or links")


def _straggler_summary(**changes) -> str:
    detectors = Detectors(SETTINGS, RANK_MAP)
    frame = healthy(0, compute_time={9: 1.16}, **changes)
    return next(a for a in detectors.update(frame) if a.kind == "straggler").summary


def test_a_straggler_that_waits_least_in_collectives_says_so():
    waits = {**dict.fromkeys(range(N), 0.31), 9: 0.12}
    summary = _straggler_summary(collective_time=waits)
    assert summary.endswith("· waits least in collectives (0.12/0.31 s)")


def test_collective_time_is_evidence_only_where_the_straggler_waits_less():
    waits = {**dict.fromkeys(range(N), 0.31), 9: 0.12, 4: 0.05}
    assert "waits less in collectives (0.12/0.31 s)" in _straggler_summary(collective_time=waits)
    usual = {**dict.fromkeys(range(N), 0.31), 9: 0.30}
    assert "collectives" not in _straggler_summary(collective_time=usual)
    assert "collectives" not in _straggler_summary()
    missing = {**dict.fromkeys(range(N), 0.31), 9: math.nan}
    assert "collectives" not in _straggler_summary(collective_time=missing)


def test_a_condition_whose_data_goes_missing_is_held_as_it_was_not_ended():
    detectors = Detectors(SETTINGS, RANK_MAP)
    slow = dict.fromkeys(range(8, 16), 90e9)
    for t in range(0, 24, 2):
        confirmed = [a for a in detectors.update(healthy(t, nvlink=slow)) if a.kind == "nvlink"]
    assert confirmed[0].confirmed and confirmed[0].since == 0
    gap = healthy(24)
    for t in (24, 26):  # a failed scrape: the whole metric missing, twice
        held = [a for a in detectors.update(replace(
            gap, time=t, values={k: v for k, v in gap.values.items() if k != "nvlink"}))
            if a.kind == "nvlink"]
        assert len(held) == 1 and held[0].confirmed and held[0].since == 0
        assert held[0].unseen_since == 24 and held[0].state.endswith("no data since 00:00:24")
    back = next(a for a in detectors.update(healthy(28, nvlink=slow)) if a.kind == "nvlink")
    assert back.since == 0 and back.confirmed and back.unseen_since is None
    # and it ends on data that shows it gone
    assert not [a for a in detectors.update(healthy(30)) if a.kind == "nvlink"]


def test_a_pending_condition_held_over_a_gap_does_not_confirm_on_no_data():
    detectors = Detectors(SETTINGS, RANK_MAP)
    slow = dict.fromkeys(range(8, 16), 90e9)
    for t in (0, 2):
        detectors.update(healthy(t, nvlink=slow))
    gap = healthy(4)
    for t in range(4, 40, 2):
        (held,) = [a for a in detectors.update(replace(
            gap, time=t, values={k: v for k, v in gap.values.items() if k != "nvlink"}))
            if a.kind == "nvlink"]
        assert held.pending and held.held == 2


def test_one_ranks_gap_holds_its_condition_while_a_rank_with_data_ends_its_own():
    detectors = Detectors(SETTINGS, RANK_MAP)
    hot = {"temperature": {5: 88.0, 6: 88.0}, "throttle_reasons": {5: 32.0, 6: 32.0}}
    for t in range(0, 24, 2):
        detectors.update(healthy(t, **hot))
    lost = {metric: {5: math.nan} for metric in healthy(0).values}
    found = {a.rank: a for a in detectors.update(healthy(24, **lost)) if a.kind == "thermal"}
    assert set(found) == {5} and found[5].confirmed and found[5].unseen_since == 24


def test_a_hold_is_met_by_polls_a_hair_short_of_it_on_a_jittery_clock():
    detectors = Detectors(SETTINGS, RANK_MAP)
    slow = dict.fromkeys(range(8, 16), 90e9)
    detectors.update(healthy(100.0, nvlink=slow))
    nvlink = next(a for a in detectors.update(healthy(119.9999, nvlink=slow)) if a.rank == 8)
    assert nvlink.confirmed and nvlink.state == "confirmed"
