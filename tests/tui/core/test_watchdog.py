"""Today's backends in a rank's log: gloo's and nccl2's timeouts are reports of a rank that
waited, a peer gone is a rank that gave up, and how each log ends says which; a rank's own
error stays its own."""

from __future__ import annotations

import pytest
from ranktop.tui.core.watchdog import (
    DUMP_WRITTEN,
    MARKERS,
    PEER_GONE,
    STOPPED,
    TIMED_OUT,
    Ending,
    ending,
    parse_report,
)

from tests.tui.core.real_logs import gloo_logs

# The new NCCL backend's words, as the PyTorch 2.14.1 wheel holds them: "Operation timed out
# after " in libtorch_cuda.so beside nccl2/WorkNCCL.cpp, "Finished writing Flight Recorder
# debug info to " in libtorch_cpu.so. The " ms" after the number is as a public report of a
# 2.15 nightly quotes it; what PyTorch puts before the words is not known, so several
# prefixes are tried.
NCCL2_TIMEOUT = "Operation timed out after 600412 ms"
NCCL2_DUMP = "Finished writing Flight Recorder debug info to /var/tmp/nccl_trace_rank_3"
NCCL2_PREFIXES = ("", "[rank3]: ", "[rank3]:[E1128 15:31:02.123456789 WorkNCCL.cpp:212] ",
                  "[rank3]: torch.distributed.DistBackendError: ")


def last_error(lines: list[str]) -> str:
    return next(line for line in reversed(lines) if "Error:" in line)


def first_timeout(lines: list[str]) -> int | None:
    return next((i for i, line in enumerate(lines)
                 if (parsed := parse_report(line)) and parsed[0].timed_out), None)


def end_of(lines: list[str]) -> Ending:
    return ending(lines, first_timeout(lines))


# --- gloo's timeout: a report of a rank that waited --------------------------------------

@pytest.mark.parametrize(("rank", "op"), [(0, "send"), (2, "recv")])
def test_gloos_timeout_as_pytorch_repeats_it_is_a_report_of_the_rank_it_names(rank, op):
    line = last_error(gloo_logs("frozen")[rank])
    assert f"Timed out waiting 10000ms for {op} operation to complete" in line
    parsed = parse_report(line)
    assert parsed is not None
    report, is_global = parsed
    assert is_global and report.rank == rank and report.timed_out
    assert report.timeout_ms == 10000 and report.seq is None and report.op == ""


def test_a_rank_that_timed_out_in_gloo_ended_timed_out_waiting_not_of_its_own():
    lines = gloo_logs("frozen")[3]
    end = end_of(lines)
    assert end == Ending("timeout", TIMED_OUT, last_error(lines))
    assert end.consequence


@pytest.mark.parametrize(("scenario", "rank", "words"), [
    ("killed", 5, "Read error [127.0.0.1]:55979: Connection reset by peer."),
    ("killed", 7, "Connection closed by peer [127.0.0.1]:21641."),
    ("user_error", 3, "Connection closed by peer [127.0.0.1]:18607."),
])
def test_a_rank_that_gloo_told_of_a_peer_gone_gave_up(scenario, rank, words):
    lines = gloo_logs(scenario)[rank]
    assert words in last_error(lines) and parse_report(last_error(lines)) is None
    end = end_of(lines)
    assert end == Ending("peer", PEER_GONE, last_error(lines)) and end.consequence


@pytest.mark.parametrize(("scenario", "rank"), [("frozen", 6), ("killed", 6), ("killed", 0)])
def test_a_log_that_just_stops_after_its_steps_stopped_without_an_error(scenario, rank):
    lines = gloo_logs(scenario)[rank]
    assert lines[-1] == "step 10 loss 0.1000"
    end = end_of(lines)
    assert end == Ending("", STOPPED, "") and not end.consequence


def test_an_empty_log_says_nothing_of_how_it_ended():
    assert ending([], None) == Ending("", "", "")
    assert ending(["", "  "], None) == Ending("", "", "")


def test_a_ranks_own_error_repeated_by_pytorch_stays_its_own():
    lines = gloo_logs("user_error")[2]
    end = end_of(lines)
    assert end.kind == "fault" and not end.consequence
    assert end.cause == "exited: ValueError: bad batch shape (3, 224) for model input"
    assert end.line == "[rank2]: ValueError: bad batch shape (3, 224) for model input"


def test_a_cuda_error_in_pytorchs_repeat_is_the_ranks_own_fault():
    # The steps and the traceback's head are real; a CPU job cannot have the CUDA error.
    steps = gloo_logs("frozen")[0][:10]
    lines = [*steps, "[rank3]: Traceback (most recent call last):",
             "[rank3]:   File \"/job/train.py\", line 12, in <module>",
             "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered"]
    assert end_of(lines) == Ending("fault", "a CUDA error in its log", lines[-1])


def test_a_timeout_with_no_end_of_its_process_is_still_a_timeout_report():
    line = last_error(gloo_logs("frozen")[4])
    lines = ["step 10 loss 0.1000", line]
    assert first_timeout(lines) == 1
    assert end_of(lines) == Ending("", STOPPED, "")  # reported, the process not seen ending


def test_a_rank_that_timed_out_then_crashed_in_gloo_ended_by_the_timeout():
    timed_out = gloo_logs("frozen")[1]
    lines = [*timed_out, "Fatal Python error: Aborted"]
    end = end_of(lines)
    assert end.kind == "timeout" and end.cause == TIMED_OUT


# --- nccl2 ------------------------------------------------------------------------------

@pytest.mark.parametrize("prefix", NCCL2_PREFIXES)
def test_nccl2s_timeout_is_a_report_of_how_long_the_operation_ran(prefix):
    parsed = parse_report(prefix + NCCL2_TIMEOUT)
    assert parsed is not None
    report, is_global = parsed
    assert report.timed_out and report.ran_ms == 600412 and report.timeout_ms is None
    assert report.rank == (3 if prefix else -1) and is_global == bool(prefix)


def test_nccl2s_timeout_then_its_dump_then_the_end_of_the_process():
    lines = ["step 4180 loss 2.1370", "[rank3]: " + NCCL2_TIMEOUT, "[rank3]: " + NCCL2_DUMP,
             "terminate called after throwing an instance of 'c10::DistBackendError'",
             "  what():  " + NCCL2_TIMEOUT]
    assert first_timeout(lines) == 1
    assert end_of(lines) == Ending("timeout", TIMED_OUT, lines[-1])


def test_nccl2s_dump_line_names_the_file():
    found = DUMP_WRITTEN.search("[rank3]: " + NCCL2_DUMP)
    assert found is not None and found.group("path") == "/var/tmp/nccl_trace_rank_3"
    assert parse_report(NCCL2_DUMP) is None  # a dump written is no timeout


def test_every_timeout_line_holds_a_marker_the_scan_looks_for():
    lines = [last_error(lines) for lines in gloo_logs("frozen").values() if len(lines) > 10]
    lines += [prefix + NCCL2_TIMEOUT for prefix in NCCL2_PREFIXES]
    assert len(lines) == 7 + len(NCCL2_PREFIXES)
    assert all(parse_report(line) and any(m in line for m in MARKERS) for line in lines)


@pytest.mark.parametrize("line", [
    "Timed out waiting for the store to answer",  # no number, no operation: not gloo's
    "Operation timed out after a while",
    "Operation timed out after " + "9" * 40 + " ms",  # no such timeout
])
def test_lines_that_only_resemble_a_timeout_report_none(line):
    assert parse_report(line) is None
