"""The time stamped at a log line's head, in every format ranktop reads."""

from __future__ import annotations

import calendar
import time

import pytest
from ranktop.tui.logs.line_time import line_time, lines_until

NOW = calendar.timegm((2026, 3, 14, 3, 0, 0))


def at(*fields: int, fraction: float = 0.0) -> float:
    return calendar.timegm((*fields, 0, 0, 0)) + fraction


@pytest.mark.parametrize(("line", "expected"), [
    # NCCL 2.26+ WARN, behind launcher prefixes
    ("[2026-03-14 02:00:31] gpu-node-001:481:692 [3] net_ib.cc:98 NCCL WARN NET/IB : x",
     at(2026, 3, 14, 2, 0, 31)),
    ("3: [default3]:[2026-03-14 02:00:31.250] host:1:2 [3] NCCL WARN x",
     at(2026, 3, 14, 2, 0, 31, fraction=0.25)),
    # Python's logging, ISO 8601
    ("2026-03-14 02:00:31,125 WARNING [rank 0] step 12 took 1.30s",
     at(2026, 3, 14, 2, 0, 31, fraction=0.125)),
    ("2026-03-14T02:00:31.5Z job started", at(2026, 3, 14, 2, 0, 31, fraction=0.5)),
    # PyTorch's glog-style header, no year: this year
    ("[rank7]:[E0314 02:00:31.715298746 ProcessGroupNCCL.cpp:632] [PG ID 0 Rank 7] Watchdog",
     at(2026, 3, 14, 2, 0, 31, fraction=0.715298746)),
    ("E0314 02:00:31.500000 48211 file.cc:89] fault", at(2026, 3, 14, 2, 0, 31, fraction=0.5)),
    # a glog day after now was written last year
    ("[E1231 23:59:59.0 x.cpp:1] late", at(2025, 12, 31, 23, 59, 59)),
])
def test_each_format_gives_its_time(line: str, expected: float) -> None:
    assert line_time(line, NOW) == pytest.approx(expected)


@pytest.mark.parametrize("line", [
    "[rank 3] step 120450 loss 2.137 step_time 1.12s tokens/s 3.74e6",
    "gpu-node-001:481:481 [3] NCCL INFO Init COMPLETE",
    "terminate called after throwing an instance of 'c10::DistBackendError'",
    "2026-13-14 02:00:31,125 not a month",
    "[E0314 25:00:31.0 x.cpp:1] not an hour",
    "",
])
def test_a_line_without_a_stamp_has_no_time(line: str) -> None:
    assert line_time(line, NOW) is None


def test_a_stamp_deep_in_the_message_is_not_the_line_s_time() -> None:
    line = "[rank 0] " + "x" * 100 + " checkpoint of 2026-03-14 02:00:31 saved"
    assert line_time(line, NOW) is None


def test_lines_as_they_stood_end_before_the_first_stamped_later() -> None:
    lines = ["2026-03-14 02:00:01,000 step 1", "  unstamped, the step's own",
             "2026-03-14 02:00:05,000 step 2", "  its traceback",
             "2026-03-14 02:00:09,000 step 3"]
    cut = lines_until(lines, local(2026, 3, 14, 2, 0, 6))
    assert cut == lines[:4]
    assert lines_until(lines, local(2026, 3, 14, 2, 0, 0)) == []
    assert lines_until(lines, local(2026, 3, 14, 2, 0, 9)) == lines
    assert lines_until(["no stamp at all", "nor here"], 0.0) == ["no stamp at all", "nor here"]


def local(*fields: int) -> float:
    """The POSIX time of a wall-clock time on this machine (as the logs' stamps are)."""
    return time.mktime((*fields, 0, 0, -1))
