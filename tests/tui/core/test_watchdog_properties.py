"""Property tests: any log lines at all give a watchdog report or None, an ending and a hang
verdict or None, never an exception."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.core.hang.triage import triage
from ranktop.tui.core.watchdog import Ending, ending, parse_report, parse_watchdog

from tests.tui.properties import FEW, LINES

TIMEOUT = ("[PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog caught collective operation timeout:"
           " WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)={ms})"
           " ran for 600010 milliseconds before timing out.")


@FEW
@given(LINES)
def test_a_line_is_a_report_or_none(line):
    parsed = parse_report(line)
    assert parsed is None or parsed[0].line == line.rstrip("\r\n")
    assert (parse_watchdog(line) is None) == (parsed is None)


@FEW
@given(st.lists(LINES, max_size=10), st.one_of(st.none(), st.integers(0, 12)))
def test_lines_have_an_ending(lines, first_timeout):
    end = ending(lines, first_timeout)
    assert isinstance(end, Ending) and end.kind in ("fault", "timeout", "peer", "")


@FEW
@given(st.dictionaries(st.integers(-3, 9), st.lists(LINES, max_size=6), max_size=5),
       st.integers(0, 8), st.frozensets(st.integers(-3, 12), max_size=4))
def test_any_logs_give_a_verdict_or_none(logs, world_size, gone):
    verdict = triage(logs, world_size, gone)
    if verdict is not None:
        assert set(verdict.dead) <= set(range(world_size))


def test_a_number_of_thousands_of_digits_is_no_report():
    digits = "9" * 5000
    assert parse_watchdog(TIMEOUT.format(seq=1, ms=digits)) is None
    report = parse_watchdog(TIMEOUT.format(seq=digits, ms=600000))
    assert report is not None and report.timeout_ms == 600000  # the sequence number is capped
    assert triage({0: [TIMEOUT.format(seq=digits, ms=digits)]}, 2) is None
