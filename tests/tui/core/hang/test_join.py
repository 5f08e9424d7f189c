"""The logs' verdict and the dumps' verdict joined: nothing dropped, disagreement said."""

from __future__ import annotations

from ranktop.tui.core.hang.flight_triage import FlightVerdict
from ranktop.tui.core.hang.join import join_verdicts
from ranktop.tui.core.hang.triage import HangVerdict


def logs(behind: list[int], sure: bool = True) -> HangVerdict:
    return HangVerdict(reporting=[0, 1], silent=[], behind=behind if sure else [],
                       last_completed={}, evidence={0: ["a watchdog line"]},
                       summary="the logs' summary", sure=sure,
                       awaiting="" if sure else "waiting for 1 more (rank 3)")


def dumps(culprits: tuple[int, ...], kind: str = "missing") -> FlightVerdict:
    return FlightVerdict(kind, culprits, group="pg 0", seq=9, op="nccl:all_reduce",
                         summary="the dumps' summary", waiting=(0, 1))


def test_either_alone_speaks_for_itself() -> None:
    only_logs = logs([3])
    assert join_verdicts(only_logs, None) is only_logs
    assert join_verdicts(None, None) is None
    assert join_verdicts(None, dumps((), "clear")) is None
    alone = join_verdicts(None, dumps((3,)))
    assert alone.behind == [3] and alone.sure and alone.flight.culprits == (3,)
    assert alone.summary == "Flight Recorder: the dumps' summary"


def test_the_dumps_settle_what_the_logs_still_wait_for() -> None:
    joined = join_verdicts(logs([], sure=False), dumps((3,)))
    assert joined.sure and joined.behind == [3] and joined.awaiting == ""
    assert "the dumps' summary" in joined.summary and "the logs' summary" in joined.summary
    assert joined.evidence == {0: ["a watchdog line"]}


def test_the_dumps_name_whom_the_logs_could_not() -> None:
    joined = join_verdicts(logs([]), dumps((2,), "mismatch"))
    assert joined.behind == [2] and not joined.disagreement


def test_agreement_keeps_the_logs_verdict_and_adds_the_dumps() -> None:
    joined = join_verdicts(logs([3]), dumps((3,), "no_dump"))
    assert joined.behind == [3] and not joined.disagreement
    assert joined.summary.startswith("the logs' summary; the Flight Recorder agrees")
    assert joined.flight is not None


def test_disagreement_keeps_both_and_says_so() -> None:
    joined = join_verdicts(logs([3]), dumps((5,)))
    assert joined.behind == [3, 5]
    assert joined.disagreement == ("the logs blame rank 3; the Flight Recorder dumps blame"
                                   " rank 5")
    assert "but the logs blame rank 3" in joined.summary


def test_dumps_without_a_culprit_are_attached_as_evidence() -> None:
    joined = join_verdicts(logs([3]), dumps((), "all_stuck"))
    assert joined.behind == [3] and joined.flight.kind == "all_stuck"
