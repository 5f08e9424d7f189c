"""Hang triage: watchdog lines of every vintage, and the verdict over many ranks' logs:
who died, who timed out, who the others wait for, and when the evidence is not in yet."""

from __future__ import annotations

import pytest
from ranktop.tui.core.hang.triage import parse_watchdog, triage

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
    logs = timed_out_job(world)
    logs[dead] = [
        *healthy_tail(dead), "",
        "[2026-01-02 03:04:05] gpu-node-056:4242:4453 [7] enqueue.cc:1556 NCCL WARN Cuda"
        " failure 'unspecified launch failure'",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
    ]
    return logs


def timed_out_job(world: int) -> dict[int, list[str]]:
    return {r: [*healthy_tail(r), watchdog_line(r), progress_line(r)] for r in range(world)}


def taken_down(rank: int, seq: int = 8812) -> list[str]:
    """What PyTorch >= 2.3 logs after a timeout: the process is ended on purpose."""
    glog = f"[rank{rank}]:[E1122 03:04:05.3 ProcessGroupNCCL.cpp:{{}}] {PG0.format(r=rank)} "
    return [
        watchdog_line(rank, seq), progress_line(rank, seq, seq, seq - 1),
        glog.format(1595) + "Some NCCL operations have failed or timed out. Due to the"
        " asynchronous nature of CUDA kernels, subsequent GPU operations might run on"
        " corrupted/incomplete data.",
        glog.format(1601) + "To avoid data inconsistency, we are taking the entire process"
        " down.",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        f"  what():  {PG0.format(r=rank)} Process group watchdog thread terminated with"
        f" exception: {watchdog_line(rank, seq).split('] ', 2)[2]}",
        "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:632 (most recent call first):",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3c in"
        " /usr/lib/python3/dist-packages/torch/lib/libc10.so)",
    ]


def old_watchdog_line(rank: int, seq: int = 9) -> str:
    """PyTorch <= 2.1: no NumelIn/NumelOut, no progress line."""
    return (f"[E ProcessGroupNCCL.cpp:475] [Rank {rank}] Watchdog caught collective operation"
            f" timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for"
            " 1800042 milliseconds before timing out.")


def old_taken_down(rank: int, seq: int = 9) -> list[str]:
    return [
        old_watchdog_line(rank, seq),
        "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out. Due to the"
        " asynchronous nature of CUDA kernels, subsequent GPU operations might run on"
        " corrupted/incomplete data.",
        "[E ProcessGroupNCCL.cpp:495] To avoid data inconsistency, we are taking the entire"
        " process down.",
        "terminate called after throwing an instance of 'std::runtime_error'",
        f"  what():  {old_watchdog_line(rank, seq).split('] ', 1)[1]}",
    ]


def dump_signal(rank: int, enqueued: int = 8811, done: int = 8811) -> str:
    return (f"[rank{rank}]:[E1122 03:04:06.1 ProcessGroupNCCL.cpp:1987] {PG0.format(r=rank)}"
            " Received a dump signal due to a collective timeout from  rank 7 and we will try"
            f" our best to dump the debug info. Last enqueued NCCL work: {enqueued}, last"
            f" completed NCCL work: {done}.This is most likely caused by incorrect usages of"
            " collectives")


XID_79 = ("NVRM: Xid (PCI:0000:9b:00): 79, pid=48211, name=python, GPU has fallen off the"
          " bus.")


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


# --- the verdict: a dead rank -----------------------------------------------------------------

def test_a_rank_dead_of_a_cuda_error_is_named_with_its_cause_and_is_not_silent() -> None:
    verdict = triage(hung_job(512, dead=455), world_size=512)
    assert verdict is not None and verdict.sure
    assert verdict.dead == [455] and verdict.behind == [455]
    assert verdict.silent == [] and verdict.unread == [] and verdict.awaiting == ""
    assert verdict.reporting == [r for r in range(512) if r != 455]
    assert verdict.last_completed[0] == 8811 and 455 not in verdict.last_completed
    assert verdict.summary == ("rank 455 is dead (a CUDA error in its log): 511 of 511 live"
                               " ranks timed out in ALLREDUCE SeqNum 8812")
    assert "Cuda failure" in verdict.evidence[455][0]
    assert verdict.evidence[3] == [watchdog_line(3), progress_line(3)]


def test_a_rank_whose_series_vanished_is_dead_at_once() -> None:
    logs = timed_out_job(512)
    logs[455] = healthy_tail(455)
    verdict = triage(logs, world_size=512, gone=[455])
    assert verdict is not None and verdict.sure and verdict.dead == [455]
    assert verdict.behind == [455] and verdict.silent == []
    assert verdict.summary == ("rank 455 is not reporting (its series vanished):"
                               " 511 of 511 live ranks"
                               " timed out in ALLREDUCE SeqNum 8812")


def test_a_vanished_rank_is_sure_evidence_before_anyone_times_out() -> None:
    verdict = triage({r: healthy_tail(r) for r in range(16)}, world_size=16, gone={9})
    assert verdict is not None and verdict.sure and verdict.behind == [9]
    assert verdict.reporting == [] and len(verdict.silent) == 15
    assert verdict.summary == ("rank 9 is not reporting (its series vanished):"
                               " no live rank has logged a"
                               " timeout yet")


def test_a_dead_rank_whose_watchdog_timed_out_too_is_not_counted_among_the_timed_out() -> None:
    logs = timed_out_job(512)
    logs[455] = [*healthy_tail(455), XID_79, watchdog_line(455), progress_line(455)]
    verdict = triage(logs, world_size=512)
    assert verdict is not None and verdict.dead == [455] and verdict.behind == [455]
    assert 455 not in verdict.reporting and len(verdict.reporting) == 511
    assert verdict.summary == ("rank 455 is dead (XID 79 in its log): 511 of 511 live ranks"
                               " timed out in ALLREDUCE SeqNum 8812")
    assert verdict.evidence[455][0] == XID_79


def test_a_vanished_rank_that_timed_out_is_dead_not_timed_out() -> None:
    verdict = triage(timed_out_job(64), world_size=64, gone=[17])
    assert verdict is not None and verdict.dead == [17] and 17 not in verdict.reporting
    assert verdict.summary.startswith("rank 17 is not reporting (its series vanished):"
                                      " 63 of 63 live")


def test_a_vanished_rank_that_its_watchdog_ended_is_no_culprit() -> None:
    # Ranks 0-3 were ended by their watchdogs after timing out; rank 9 vanished without that.
    logs = {r: [*healthy_tail(r), *taken_down(r)] for r in range(16)}
    logs[9] = [*healthy_tail(9), watchdog_line(9), progress_line(9)]
    verdict = triage(logs, world_size=16, gone=[0, 1, 2, 3, 9])
    assert verdict is not None and verdict.dead == [9] and verdict.behind == [9]
    assert verdict.reporting == [r for r in range(16) if r != 9]
    assert verdict.summary == ("rank 9 is not reporting (its series vanished):"
                               " 15 of 15 live ranks timed"
                               " out in ALLREDUCE SeqNum 8812")


def test_a_cause_in_the_log_and_a_vanished_series_are_both_said() -> None:
    logs = timed_out_job(8)
    logs[2] = [*healthy_tail(2), XID_79]
    verdict = triage(logs, world_size=8, gone=[2])
    assert verdict is not None
    assert verdict.summary.startswith("rank 2 is dead (XID 79 in its log, its series vanished)")


def test_several_dead_ranks_each_with_its_cause() -> None:
    logs = timed_out_job(16)
    logs[4] = [*healthy_tail(4), XID_79]
    logs[5] = healthy_tail(5)
    verdict = triage(logs, world_size=16, gone=[5])
    assert verdict is not None and verdict.dead == [4, 5] and verdict.behind == [4, 5]
    # "dead" only where an exit shows: rank 5's series only vanished
    assert verdict.summary == ("ranks 4, 5 are down (4: XID 79 in its log; 5: its series"
                               " vanished): 14 of 14 live ranks timed out in ALLREDUCE SeqNum"
                               " 8812")


def test_a_crash_of_its_own_is_a_death() -> None:
    logs = timed_out_job(8)
    logs[7] = [*healthy_tail(7), "Traceback (most recent call last):",
               '  File "/job/train.py", line 88, in <module>',
               "    batch = next(loader)", "ValueError: shard 17 is corrupt"]
    verdict = triage(logs, world_size=8)
    assert verdict is not None and verdict.dead == [7]
    assert verdict.summary.startswith("rank 7 is dead (exited: ValueError: shard 17 is corrupt)")
    assert verdict.evidence[7][0] == "ValueError: shard 17 is corrupt"


def test_a_timeout_that_takes_the_process_down_is_no_death() -> None:
    logs = {r: [*healthy_tail(r), *taken_down(r)] for r in range(8)}
    logs[5] = [*healthy_tail(5), *taken_down(5, seq=8811)]
    verdict = triage(logs, world_size=8)
    assert verdict is not None and verdict.dead == [] and verdict.behind == [5]
    assert verdict.summary == ("rank 5 timed out at SeqNum 8811, the others at 8812: the others"
                               " are waiting for it")


def test_ranks_that_gave_up_on_a_peer_are_not_culprits() -> None:
    logs = hung_job(16, dead=9)
    for rank in (8, 10):
        logs[rank] = [
            *healthy_tail(rank),
            f"[rank{rank}]:[E1122 03:04:05.1 ProcessGroupNCCL.cpp:1423] {PG0.format(r=rank)}"
            " Process group watchdog thread terminated with exception: NCCL error: remote"
            " process exited or there was a network error, NCCL version 2.21.5",
            "terminate called after throwing an instance of 'c10::DistBackendError'",
        ]
    logs[11] = [*healthy_tail(11), "Traceback (most recent call last):",
                "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970,"
                " unhandled system error, NCCL version 2.21.5 ncclSystemError: System call"
                " (e.g. socket, malloc) or external library call failed or device error. Last"
                " error: socketProgress: Connection closed by remote peer gpu-node-002<45678>"]
    verdict = triage(logs, world_size=16)
    assert verdict is not None and verdict.dead == [9] and verdict.behind == [9]
    assert verdict.reporting == [r for r in range(16) if r != 9] and verdict.sure
    assert verdict.summary.endswith("; ranks 8, 10, 11 gave up on a peer (remote error)")


def test_when_most_series_vanish_unexplained_the_job_is_going_down_and_names_no_one() -> None:
    logs = {r: [*healthy_tail(r), *taken_down(r)] for r in range(8)}
    for silent in (3, 4, 5, 6, 7):
        logs[silent] = healthy_tail(silent)
    verdict = triage(logs, world_size=8, gone=range(8))
    assert verdict is not None and verdict.dead == [] and not verdict.sure
    assert verdict.behind == [] and verdict.silent == [3, 4, 5, 6, 7]
    assert "the series of 8 ranks vanished" in verdict.summary


def test_series_that_vanish_after_their_ranks_timeouts_confirm_the_one_that_did_not() -> None:
    # every watchdog ended its process after its timeout: those vanishings are the hang's
    # consequences, and the one rank that vanished without a timeout is the culprit
    logs = {r: [*healthy_tail(r), *taken_down(r)] for r in range(8)}
    logs[3] = healthy_tail(3)
    verdict = triage(logs, world_size=8, gone=range(8))
    assert verdict is not None and verdict.sure and verdict.dead == [3]
    assert verdict.behind == [3] and "going down" not in verdict.summary


def test_gone_ranks_outside_the_job_are_ignored() -> None:
    verdict = triage(timed_out_job(4), world_size=4, gone=[7, -1])
    assert verdict is not None and verdict.dead == [] and verdict.behind == []


# --- the verdict: no culprit before the evidence is in ------------------------------------

def test_not_sure_while_some_live_ranks_have_yet_to_time_out() -> None:
    logs = timed_out_job(512)
    logs[12], logs[13] = healthy_tail(12), healthy_tail(13)
    verdict = triage(logs, world_size=512)
    assert verdict is not None and not verdict.sure
    assert verdict.behind == [] and verdict.silent == [12, 13]
    assert verdict.awaiting == "waiting for 2 more (ranks 12, 13)"
    assert verdict.summary == ("not sure yet: 510 of 512 live ranks logged a timeout in"
                               " ALLREDUCE SeqNum 8812; waiting for 2 more (ranks 12, 13)")
    assert verdict.evidence[12] == healthy_tail(12)[-3:]


def test_sure_once_the_only_rank_without_a_timeout_shows_it_is_behind() -> None:
    logs = timed_out_job(512)
    logs[12] = [*healthy_tail(12), dump_signal(12)]
    verdict = triage(logs, world_size=512)
    assert verdict is not None and verdict.sure and verdict.behind == [12]
    assert verdict.summary == ("rank 12 is the only rank without a timeout at SeqNum 8812; its"
                               " last completed work is 8811: the others are waiting for it")
    assert verdict.evidence[12] == [dump_signal(12)]


def test_a_rank_that_enqueued_the_work_is_no_proof_of_being_behind() -> None:
    logs = timed_out_job(8)
    logs[6] = [dump_signal(6, enqueued=8812, done=8811)]
    verdict = triage(logs, world_size=8)
    assert verdict is not None and not verdict.sure and verdict.behind == []


def test_one_proven_rank_and_one_unexplained_is_not_sure() -> None:
    logs = timed_out_job(8)
    logs[1] = [dump_signal(1)]
    logs[2] = healthy_tail(2)
    verdict = triage(logs, world_size=8)
    assert verdict is not None and not verdict.sure and verdict.behind == []
    assert verdict.awaiting == "waiting for 1 more (rank 2)"


def test_a_rank_with_no_lines_is_unread_never_silent() -> None:
    # A log just rotated (copytruncate) whose predecessor held nothing for it: no evidence.
    logs = timed_out_job(16)
    logs[3] = []
    logs[11] = ["", "   "]
    verdict = triage(logs, world_size=16)
    assert verdict is not None and not verdict.sure
    assert verdict.silent == [] and verdict.unread == [3, 11] and verdict.behind == []
    assert verdict.awaiting == "waiting for 2 more (ranks 3, 11), no log read for 2 of them"
    assert 3 not in verdict.evidence


def test_ranks_with_no_log_at_all_are_awaited() -> None:
    logs = {r: [watchdog_line(r)] for r in range(16) if r not in (3, 11)}
    verdict = triage(logs, world_size=16)
    assert verdict is not None and not verdict.sure and verdict.unread == [3, 11]
    assert verdict.summary.endswith("waiting for 2 more (ranks 3, 11), no log read for 2 of them")


def test_a_restarted_rank_with_nothing_since_is_silent_not_unread() -> None:
    init = ("gpu-node-000:4242:4242 [0] NCCL INFO ncclCommInitRankConfig comm 0x55d8 rank 2"
            " nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1 - Init COMPLETE")
    logs = {r: [watchdog_line(r)] for r in range(4)}
    logs[2] = [watchdog_line(2), init]
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.silent == [2] and verdict.unread == []


def test_many_awaited_ranks_are_summarised() -> None:
    logs = {r: [watchdog_line(r)] if r < 2 else healthy_tail(r) for r in range(10)}
    verdict = triage(logs, world_size=10)
    assert verdict is not None and not verdict.sure and len(verdict.silent) == 8
    assert verdict.awaiting == "waiting for 8 more (ranks 2, 3, 4, 5, 6, ... (+3))"


# --- the verdict: every live rank reported -----------------------------------------------

def test_when_everyone_reports_the_one_a_collective_behind_is_named() -> None:
    logs = {r: [watchdog_line(r), progress_line(r)] for r in range(8)}
    logs[5] = [watchdog_line(5, seq=8811), progress_line(5, seq=8811, enqueued=8811, done=8810)]
    verdict = triage(logs, world_size=8)
    assert verdict is not None and verdict.silent == [] and verdict.behind == [5]
    assert verdict.summary == ("rank 5 timed out at SeqNum 8811, the others at 8812: the others"
                               " are waiting for it")
    assert verdict.evidence[5][0] == watchdog_line(5, seq=8811)


def test_one_rank_a_collective_behind_by_enqueued_work() -> None:
    logs = {r: [progress_line(r)] for r in range(4)}
    logs[2] = [progress_line(2, enqueued=8811)]
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.behind == [2] and verdict.sure
    assert verdict.summary == ("rank 2 is behind: last enqueued 8811, the others 8812: the"
                               " others are waiting for it")


def test_all_stopped_at_the_same_work() -> None:
    verdict = triage({r: [watchdog_line(r), progress_line(r)] for r in range(4)}, world_size=4)
    assert verdict is not None and verdict.behind == [] and verdict.silent == [] and verdict.sure
    assert verdict.summary == ("4 of 4 live ranks timed out in ALLREDUCE SeqNum 8812: all stopped"
                               " at the same work, no one rank stands out (network or NCCL?)")


def test_a_timeout_in_another_process_group_is_not_being_behind() -> None:
    logs = {r: [watchdog_line(r), progress_line(r)] for r in range(8)}
    logs[5].append(
        "[rank5]:[E1122 03:04:05.1 ProcessGroupNCCL.cpp:632] [PG ID 2 PG GUID 3 Rank 1] Watchdog"
        " caught collective operation timeout: WorkNCCL(SeqNum=32, OpType=ALLGATHER, NumelIn=8,"
        " NumelOut=64, Timeout(ms)=600000) ran for 600100 milliseconds before timing out.")
    logs[5].insert(0, logs[5].pop())  # its sub-group timed out first
    verdict = triage(logs, world_size=8)
    assert verdict is not None and verdict.behind == [] and verdict.sure
    assert "no one rank stands out" in verdict.summary


def test_a_rank_that_only_received_the_dump_signal_is_behind() -> None:
    logs = {r: [watchdog_line(r), progress_line(r)] for r in range(4)}
    logs[1] = [f"{PG0.format(r=1)} Received a dump signal due to a collective timeout from rank"
               " 0 and we will try our best to dump the debug info. Last enqueued NCCL work: 8811,"
               " last completed NCCL work: 8811."]
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.behind == [1] and verdict.last_completed[1] == 8811
    assert verdict.evidence[1] == logs[1]


# --- PyTorch <= 2.1 ----------------------------------------------------------------------

def test_old_pytorch_lines_a_rank_a_collective_behind() -> None:
    logs = {r: [*healthy_tail(r), *old_taken_down(r)] for r in range(8)}
    logs[3] = [*healthy_tail(3), *old_taken_down(3, seq=8)]
    verdict = triage(logs, world_size=8)
    assert verdict is not None and verdict.dead == [] and verdict.behind == [3]
    assert verdict.last_completed == {}
    assert verdict.summary == ("rank 3 timed out at SeqNum 8, the others at 9: the others are"
                               " waiting for it")
    assert verdict.evidence[0] == [old_watchdog_line(0)]  # the what() repeat is no new report


def test_old_pytorch_lines_a_silent_rank_is_awaited_then_a_vanished_one_is_dead() -> None:
    logs = {r: [*healthy_tail(r), *old_taken_down(r)] for r in range(8)}
    logs[6] = healthy_tail(6)
    waiting = triage(logs, world_size=8)
    assert waiting is not None and not waiting.sure and waiting.dead == []
    assert waiting.summary == ("not sure yet: 7 of 8 live ranks logged a timeout in ALLREDUCE"
                               " SeqNum 9; waiting for 1 more (rank 6)")
    dead = triage(logs, world_size=8, gone=[6])
    assert dead is not None and dead.sure and dead.behind == [6]
    assert dead.summary == ("rank 6 is not reporting (its series vanished):"
                            " 7 of 7 live ranks timed out"
                            " in ALLREDUCE SeqNum 9")


# --- reading the lines -------------------------------------------------------------------

def test_no_timeout_no_verdict() -> None:
    assert triage({r: healthy_tail(r) for r in range(8)}, world_size=8) is None
    assert triage({}, world_size=8) is None


def test_a_merged_log_counts_each_line_for_the_rank_it_names() -> None:
    merged = [f"{r}: {line}" for r in range(64) if r != 6
              for line in (*healthy_tail(r)[:2], watchdog_line(r), progress_line(r))]
    verdict = triage({0: merged}, world_size=64)
    assert verdict is not None
    assert verdict.reporting == [r for r in range(64) if r != 6]
    assert verdict.last_completed[63] == 8811
    assert verdict.awaiting == "waiting for 1 more (rank 6), no log read for 1 of them"


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
    logs = {r: [XID_79, watchdog_line(r), init.format(r=r), *healthy_tail(r)] for r in range(4)}
    assert triage(logs, world_size=4) is None
    logs[2] = [init.format(r=2), watchdog_line(2)]
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.reporting == [2] and verdict.dead == []


def test_evidence_is_a_few_lines_per_rank() -> None:
    logs = {r: [watchdog_line(r)] * 10 for r in range(4)}
    logs[0] = ["noise"] * 50 + [f"line {i} NCCL WARN x" for i in range(10)]
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.behind == [] and verdict.silent == [0]
    assert verdict.evidence[0] == ["line 0 NCCL WARN x", "line 8 NCCL WARN x", "line 9 NCCL WARN x"]
    assert verdict.evidence[1] == [watchdog_line(1)]  # one report, said ten times
    assert all(1 <= len(lines) <= 3 for lines in verdict.evidence.values())


def test_ranks_outside_the_job_are_ignored_and_iterables_are_read_once() -> None:
    logs = {r: iter([watchdog_line(r)]) for r in range(5)}
    logs[99] = iter([watchdog_line(99)])
    verdict = triage(logs, world_size=4)
    assert verdict is not None and verdict.reporting == [0, 1, 2, 3] and verdict.silent == []


# --- culprits: the cause, not everyone who timed out -----------------------------------------

def test_a_dead_rank_is_the_only_culprit_live_ranks_differences_are_evidence() -> None:
    # Rank 9 died; live ranks timed out in different work of the group (some one all-reduce
    # behind): that is what a death does to its peers, not a second cause.
    logs = hung_job(16, dead=9)
    for rank in (1, 2, 3):
        logs[rank] = [*healthy_tail(rank), watchdog_line(rank, 8809),
                      progress_line(rank, 8809, 8809, 8808)]
    verdict = triage(logs, world_size=16)
    assert verdict is not None and verdict.sure
    assert verdict.behind == [9] and verdict.dead == [9]
    assert verdict.lagging == [1, 2, 3]
    assert "not culprits" in verdict.summary and "rank 1 timed out at SeqNum 8809" in \
        verdict.summary
    assert verdict.evidence[1] == [watchdog_line(1, 8809), progress_line(1, 8809, 8809, 8808)]


def test_beside_a_dead_rank_the_live_ranks_yet_to_time_out_are_said_in_plain_words() -> None:
    logs = timed_out_job(16)
    for rank in (1, 2, 9):
        logs[rank] = healthy_tail(rank)
    verdict = triage(logs, world_size=16, gone={9})
    assert verdict is not None and verdict.dead == [9]
    assert verdict.summary.endswith("; 2 live ranks have not timed out yet")
