"""The straggler verdict: how much slower, the shape the hot ranks form, the severity by
impact, and the wandering straggler of the whole job."""

from __future__ import annotations

import math
from dataclasses import replace

from ranktop.tui.core.config_values import DetectSettings
from ranktop.tui.core.detect.detectors import Detectors
from ranktop.tui.core.model import Frame, RankMap
from ranktop.tui.core.parallelism import parse

N = 64
RANK_MAP = RankMap.grid([f"h{i}" for i in range(N // 8)], 8, "test")
P = parse("tp=4,pp=4,dp=4")
SETTINGS = DetectSettings()


def frame(t: float, slow: dict[int, float]) -> Frame:
    compute = [0.80 * (1 + 0.003 * math.sin(r * 7.1 + t)) for r in range(N)]
    for rank, factor in slow.items():
        compute[rank] *= factor
    return Frame(time=t, values={"compute_time": compute,
                                 "step_time": [1.12 + max(slow.values(), default=1) - 1] * N},
                 job={})


def stragglers(slow_at, seconds: float = 40, parallelism=P, rank_map=RANK_MAP) -> list:
    detectors = Detectors(SETTINGS, rank_map, parallelism)
    found = []
    for i in range(int(seconds / 2) + 1):
        found = [a for a in detectors.update(frame(2.0 * i, slow_at(i))) if a.kind in
                 ("straggler", "fail_slow")]
    return found


def test_impact_sets_the_severity_ten_percent_warns_twenty_is_critical():
    (warn,) = stragglers(lambda i: {9: 1.14})
    (critical,) = stragglers(lambda i: {9: 1.3})
    assert (warn.severity, critical.severity) == ("warning", "critical")
    assert warn.confirmed and warn.summary.startswith("compute 1.14x the median (+14%), ")
    # plain words on the row; the deviations, a statistician's figure, in the detail view
    assert "MAD" not in warn.summary and "spread" in warn.summary
    assert "above it (median absolute deviations" in warn.detail
    assert stragglers(lambda i: {9: 1.06}) == []  # the dead band


def test_a_slow_stage_is_one_anomaly_on_its_first_rank():
    stage = [r for r in range(N) if P.stage(r) == 3]
    (found,) = stragglers(lambda i: dict.fromkeys(stage, 1.25))
    assert found.rank == min(stage)
    assert "stage 3 of 4: 16 ranks, worst" in found.summary
    assert "(an imbalanced pipeline stage), steady 40 s" in found.summary


def test_a_slow_replica_is_one_column():
    replica = [r for r in range(N) if P.replica(r) == 1]
    (found,) = stragglers(lambda i: dict.fromkeys(replica, 1.25))
    assert found.rank == min(replica) and "replica 1: 16 ranks" in found.summary


def test_without_parallelism_many_scattered_ranks_are_one_line_few_are_each_their_own():
    stage = [r for r in range(N) if P.stage(r) == 3]  # ranks 48-63: all of nodes 6 and 7
    by_node = stragglers(lambda i: dict.fromkeys(stage, 1.25), parallelism=None)
    assert [a.rank for a in by_node] == [48, 56]
    assert ["node 6: 8 ranks" in by_node[0].summary, "(one node)" in by_node[1].summary] == [
        True, True]
    scattered = range(0, N, 4)  # two GPUs of every node
    (found,) = stragglers(lambda i: dict.fromkeys(scattered, 1.25), parallelism=None)
    assert found.rank is None  # one line for the job, not sixteen
    assert "16 slow GPUs in 8 nodes, worst" in found.summary
    assert "[layout] parallelism tells" in found.summary
    few = stragglers(lambda i: {3: 1.25, 40: 1.3}, parallelism=None)
    assert {a.rank for a in few} == {3, 40}
    assert all("one of 2 slow GPUs" in a.summary for a in few)


def test_ranks_no_gpu_data_named_are_slow_ranks_not_gpus():
    cpu_job = replace(RANK_MAP, ranks=tuple(replace(r, gpu_named=False) for r in RANK_MAP.ranks))
    (one,) = stragglers(lambda i: {5: 1.3}, parallelism=None, rank_map=cpu_job)
    assert "one rank (a bad worker)" in one.summary and "nothing on its links" in one.summary
    few = stragglers(lambda i: {3: 1.25, 40: 1.3}, parallelism=None, rank_map=cpu_job)
    assert all("one of 2 slow ranks" in a.summary for a in few)
    many = stragglers(lambda i: dict.fromkeys(range(0, N, 4), 1.25), parallelism=None,
                      rank_map=cpu_job)
    assert "16 slow ranks in 8 nodes" in many[0].summary
    assert not any("GPU" in a.summary for a in [one, *few, *many])
    (on_gpu,) = stragglers(lambda i: {5: 1.3}, parallelism=None)
    assert "one GPU (a bad worker)" in on_gpu.summary
    assert "nothing on its GPU or links" in on_gpu.summary


def test_a_parallelism_that_is_not_the_jobs_falls_back_to_nodes():
    slow = {17: 1.3, 20: 1.35, 21: 1.3, 22: 1.3}
    found = stragglers(lambda i: slow, parallelism=parse("tp=8,pp=4,dp=4"))
    assert [a.rank for a in found] == [16]
    assert "node 2: 4 ranks, worst 20 (one node)" in found[0].summary


def test_a_slowest_rank_that_moves_every_poll_is_one_anomaly_of_the_job():
    found = stragglers(lambda i: {(i * 11) % N: 1.3})
    assert [(a.kind, a.rank) for a in found] == [("straggler", None)]
    assert "the slowest rank moves" in found[0].summary
    assert "data or sequence-length imbalance" in found[0].summary
    assert found[0].confirmed


def test_a_steady_straggler_is_still_named_while_others_wander():
    found = stragglers(lambda i: {9: 1.4, (i * 11) % N + (1 if (i * 11) % N == 9 else 0): 1.3})
    assert {a.rank for a in found} == {None, 9}


def test_a_job_that_slowed_as_a_whole_is_fail_slow_not_a_straggler():
    detectors = Detectors(SETTINGS, RANK_MAP, P)
    found = []
    for i in range(100):
        f = frame(2.0 * i, {})
        if i >= 40:
            f.values["step_time"][:] = [1.12 * 1.2] * N
            f.values["compute_time"][:] = [v * 1.2 for v in f.values["compute_time"]]
        found = detectors.update(f)
    assert [(a.kind, a.rank) for a in found] == [("fail_slow", None)]
    assert found[0].confirmed and found[0].since == 80.0


def test_a_slow_stage_in_noise_stays_one_row_though_its_ranks_come_and_go():
    import random

    rng = random.Random(5)
    stage = [r for r in range(N) if P.stage(r) == 0]
    detectors = Detectors(SETTINGS, RANK_MAP, P)
    seen = set()
    for i in range(25):
        f = frame(2.0 * i, {})
        f.values["compute_time"][:] = [0.8 * (1.16 if r in stage else 1) * (1 + rng.gauss(0, 0.02))
                                       for r in range(N)]
        found = [a for a in detectors.update(f) if a.kind == "straggler"]
        seen |= {a.key for a in found}
    assert seen == {("straggler", 0)}
    assert found[0].confirmed and "stage 0 of 4: 16 ranks" in found[0].summary


def test_a_steady_straggler_dipping_under_the_bar_for_a_poll_keeps_its_verdict():
    dips = {7, 12}  # polls where it reads only 5 % slower
    (found,) = stragglers(lambda i: {9: 1.05 if i in dips else 1.14})
    assert found.since == 0.0 and found.confirmed


def test_a_one_poll_blip_is_gone_the_next_poll():
    detectors = Detectors(SETTINGS, RANK_MAP, P)
    assert [a.rank for a in detectors.update(frame(0.0, {9: 1.3}))] == [9]
    assert detectors.update(frame(2.0, {})) == []
