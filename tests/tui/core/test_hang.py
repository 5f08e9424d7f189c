"""Hang triage: watchdog lines of every vintage, and the verdict over many ranks' logs."""

from __future__ import annotations

import pytest
from ranktop.tui.core.hang import parse_watchdog, triage

PG0 = "[PG ID 0 PG GUID 0(default_pg) Rank {r}]"


def watchdog_line(rank: int, seq: int = 8812, op: str = "ALLREDUCE") -> str:
    return (
        f"[rank{rank}]:[E1122 03:04:05.123456789 ProcessGroupNCCL.cpp:632] {PG0.format(r=rank)}"
        f" Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op},"
        " NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600032 milliseconds"
        " before timing out."
    )


def progress_line(rank: int, seq: int = 8812, enqueued: int = 8812, done: int = 8811) -> str:
    return (
        f"[rank{rank}]:[E1122 03:04:05.223456789 ProcessGroupNCCL.cpp:2168] {PG0.format(r=rank)}"
        f" Timeout at NCCL work: {seq}, last enqueued NCCL work: {enqueued}, last completed NCCL"
        f" work: {done}."
    )


def healthy_tail(rank: int) -> list[str]:
    return [f"[rank {rank}] step {120000 + i} loss 2.137 step_time 1.12s tokens/s 3.74e6"
            for i in range(20)]


def hung_job(world: int, dead: int) -> dict[int, list[str]]:
    logs = {r: [*healthy_tail(r), watchdog_line(r), progress_line(r)] for r in range(world)}
    logs[dead] = [
        *healthy_tail(dead), "",
        "[2026-01-02 03:04:05] gpu-node-056:4242:4453 [7] enqueue.cc:1556 NCCL WARN Cuda"
        " failure 'unspecified launch failure'",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
    ]
    return logs


# --- one line ------------------------------------------------------------------------------

def test_newer_watchdog_line_gives_every_field() -> None:
    report = parse_watchdog(watchdog_line(3))
    assert report is not None
    assert (report.rank, report.seq, report.op) == (3, 8812, "ALLREDUCE")
    assert (report.timeout_ms, report.ran_ms) == (600000, 600032)
    assert report.last_enqueued is None and report.last_completed is None
    assert report.line == watchdog_line(3)


def test_older_watchdog_line_without_numel() -> None:
    line = ("[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout:"
            " WorkNCCL(SeqNum=9, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800042"
            " milliseconds before timing out.")
    report = parse_watchdog(line)
    assert report is not None
    assert (report.rank, report.seq, report.op, report.timeout_ms, report.ran_ms) == (
        1, 9, "BROADCAST", 1800000, 1800042)


def test_oldest_work_without_seqnum_and_with_tensor_shape() -> None:
    line = ("[E ProcessGroupNCCL.cpp:566] [Rank 2] Caught collective operation timeout: WorkNCCL("
            "OpType=_ALLGATHER_BASE, TensorShape=[1024, 4096], Timeout(ms)=60000) ran for 60543"
            " milliseconds before timing out.")
    report = parse_watchdog(line)
    assert report is not None
    assert (report.rank, report.seq, report.op) == (2, None, "_ALLGATHER_BASE")
    assert report.ran_ms == 60543 and report.timed_out


@pytest.mark.parametrize("text, seq, enqueued, done", [
    ("Timeout at NCCL work: 8812, last enqueued NCCL work: 8812, last completed NCCL work: 8811.",
     8812, 8812, 8811),
    ("Exception (either an error or timeout) detected by watchdog at work: 32, last enqueued"
     " NCCL work: 32, last completed NCCL work: 31.", 32, 32, 31),
    ("Timeout at NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: -1.",
     1, 1, -1),
])
def test_progress_lines(text: str, seq: int, enqueued: int, done: int) -> None:
    report = parse_watchdog(f"[PG ID 2 PG GUID 3 Rank 6] {text}")
    assert report is not None
    assert (report.rank, report.seq, report.last_enqueued, report.last_completed) == (
        6, seq, enqueued, done)
    assert report.op == "" and report.timeout_ms is None


def test_dump_signal_is_progress_but_not_a_timeout() -> None:
    line = (f"[rank4]:[E703 15:37:17.178360488 ProcessGroupNCCL.cpp:1987] {PG0.format(r=4)}"
            " Received a dump signal due to a collective timeout from  rank 7 and we will try"
            " our best to dump the debug info. Last enqueued NCCL work: 56118, last completed"
            " NCCL work: 56118.This is most likely caused by incorrect usages of collectives")
    report = parse_watchdog(line)
    assert report is not None
    assert (report.rank, report.seq, report.last_enqueued, report.last_completed) == (
        4, None, 56118, 56118)
    assert not report.timed_out


@pytest.mark.parametrize("prefix", ["9: ", "[9] ", "[default1]:", "gpu-node-001: ", "9: [rank9]:"])
def test_launcher_prefixes_are_ignored(prefix: str) -> None:
    line = ("[E ProcessGroupNCCL.cpp:737] [Rank 9] Watchdog caught collective operation timeout:"
            " WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=1000) ran for 1003 milliseconds"
            " before timing out.")
    report = parse_watchdog(prefix + line)
    assert report is not None and (report.rank, report.seq) == (9, 5)


def test_blocking_wait_timeout() -> None:
    line = ("[Rank 0] Work WorkNCCL(SeqNum=3, OpType=ALLREDUCE, Timeout(ms)=10000) timed out in"
            " blocking wait (TORCH_NCCL_BLOCKING_WAIT=1).")
    report = parse_watchdog(line)
    assert report is not None and (report.rank, report.seq, report.ran_ms) == (0, 3, None)


@pytest.mark.parametrize("line", [
    "",
    "[rank 3] step 120450 loss 2.137 step_time 1.12s tokens/s 3.74e6",
    "[PG 1 Rank 0] NCCL Work update periodically: last enqueued NCCL work: 5, last completed"
    " NCCL work: 5.",
    "gpu-node-001:4242:4242 [3] NCCL INFO comm 0x55d8 rank 3 nranks 16 cudaDev 3 busId 5d000"
    " commId 0x1 - Init COMPLETE",
    "[Rank 3] WorkNCCL(SeqNum=7, OpType=ALLREDUCE, Timeout(ms)=600000) enqueued",
])
def test_lines_that_report_no_timeout(line: str) -> None:
    assert parse_watchdog(line) is None


# --- the verdict ---------------------------------------------------------------------------

def test_the_rank_that_logged_nothing_is_the_one_the_others_wait_for() -> None:
    verdict = triage(hung_job(512, dead=455), world_size=512)
    assert verdict is not None
    assert verdict.behind == [455] and verdict.silent == [455]
    assert verdict.reporting == [r for r in range(512) if r != 455]
    assert verdict.last_completed[0] == 8811 and 455 not in verdict.last_completed
    assert verdict.summary == ("511 ranks timed out in ALLREDUCE SeqNum 8812; rank 455 logged"
                               " nothing: the others are waiting for it")
    assert any("Cuda failure" in line for line in verdict.evidence[455])
    assert verdict.evidence[3] == [watchdog_line(3), progress_line(3)]


def test_no_timeout_no_verdict() -> None:
    assert triage({r: healthy_tail(r) for r in range(8)}, world_size=8) is None
    assert triage({}, world_size=8) is None


def test_when_everyone_reports_the_one_with_less_completed_is_behind() -> None:
    logs = {r: [watchdog_line(r), progress_line(r)] for r in range(8)}
    logs[5] = [watchdog_line(5, seq=8811), progress_line(5, seq=8811, enqueued=8811, done=8810)]
    verdict = triage(logs, world_size=8)
    assert verdict is not None and verdict.silent == [] and verdict.behind == [5]
    assert verdict.summary == ("8 ranks timed out in ALLREDUCE SeqNum 8812 (7 of them); rank 5"
                               " is behind (last completed 8810): the others are waiting")
    assert verdict.evidence[5][0] == watchdog_line(5, seq=8811)


def test_one_rank_a_collective_behind_by_enqueued_work() -> None:
    logs = {r: [progress_line(r)] for r in range(4)}
    logs[2] = [progress_line(2, enqueued=8811)]
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.behind == [2]


def test_all_stopped_at_the_same_work() -> None:
    verdict = triage({r: [watchdog_line(r), progress_line(r)] for r in range(4)}, world_size=4)
    assert verdict is not None and verdict.behind == [] and verdict.silent == []
    assert "no one rank stands out" in verdict.summary


def test_ranks_with_no_log_are_suspects_when_every_read_rank_timed_out() -> None:
    logs = {r: [watchdog_line(r)] for r in range(16) if r not in (3, 11)}
    verdict = triage(logs, world_size=16)
    assert verdict is not None
    assert verdict.silent == [3, 11] and verdict.behind == [3, 11]
    assert "no log read for 2 ranks (3, 11)" in verdict.summary


def test_a_silent_rank_with_a_log_comes_before_ranks_with_none() -> None:
    logs = {r: [watchdog_line(r)] for r in range(16) if r != 11}
    logs[3] = healthy_tail(3)
    verdict = triage(logs, world_size=16)
    assert verdict is not None and verdict.silent == [3, 11] and verdict.behind == [3]
    assert verdict.evidence[3] == healthy_tail(3)[-3:]


def test_a_rank_that_only_received_the_dump_signal_is_behind() -> None:
    logs = {r: [watchdog_line(r), progress_line(r)] for r in range(4)}
    logs[1] = [f"{PG0.format(r=1)} Received a dump signal due to a collective timeout from rank"
               " 0 and we will try our best to dump the debug info. Last enqueued NCCL work: 8811,"
               " last completed NCCL work: 8811."]
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.behind == [1] and verdict.last_completed[1] == 8811
    assert verdict.evidence[1] == logs[1]


def test_a_merged_log_counts_each_line_for_the_rank_it_names() -> None:
    merged = [f"{r}: {line}" for r in range(64) if r != 6
              for line in (*healthy_tail(r)[:2], watchdog_line(r), progress_line(r))]
    verdict = triage({0: merged}, world_size=64)
    assert verdict is not None
    assert verdict.reporting == [r for r in range(64) if r != 6]
    assert verdict.last_completed[63] == 8811 and verdict.behind == [6]


def test_line_rank_without_global_prefix_trusts_the_key() -> None:
    # A sub-group's watchdog names the rank within the group, not in the job.
    line = ("[PG ID 3 PG GUID 5 Rank 1] Watchdog caught collective operation timeout: WorkNCCL("
            "SeqNum=40, OpType=ALLGATHER, NumelIn=8, NumelOut=64, Timeout(ms)=600000) ran for"
            " 600100 milliseconds before timing out.")
    verdict = triage({6: [line], 7: [line]}, world_size=8)
    assert verdict is not None and verdict.reporting == [6, 7]


def test_lines_before_a_restart_do_not_count() -> None:
    init = ("gpu-node-000:4242:4242 [0] NCCL INFO ncclCommInitRankConfig comm 0x55d8 rank {r}"
            " nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1 - Init COMPLETE")
    logs = {r: [watchdog_line(r), init.format(r=r), *healthy_tail(r)] for r in range(4)}
    assert triage(logs, world_size=4) is None
    logs[2] = [init.format(r=2), watchdog_line(2)]
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.reporting == [2]


def test_evidence_is_a_few_lines_per_rank() -> None:
    logs = {r: [watchdog_line(r)] * 10 for r in range(4)}
    logs[0] = ["noise"] * 50 + [f"line {i} NCCL WARN x" for i in range(10)]
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.behind == [0]
    assert verdict.evidence[0] == ["line 0 NCCL WARN x", "line 8 NCCL WARN x", "line 9 NCCL WARN x"]
    assert all(len(lines) == 3 for lines in verdict.evidence.values())


def test_ranks_outside_the_job_are_ignored_and_iterables_are_read_once() -> None:
    logs = {r: iter([watchdog_line(r)]) for r in range(5)}
    logs[99] = iter([watchdog_line(99)])
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.reporting == [0, 1, 2, 3] and verdict.silent == []


def test_many_silent_ranks_are_summarised() -> None:
    logs = {r: [watchdog_line(r)] if r < 2 else healthy_tail(r) for r in range(10)}
    verdict = triage(logs, world_size=10)
    assert verdict is not None and len(verdict.behind) == 8
    assert "ranks 2, 3, 4, 5, 6, ... (+3) logged nothing" in verdict.summary
