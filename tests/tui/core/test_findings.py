"""The report's judgements: never healthy without an answer that holds a rank."""

from __future__ import annotations

from ranktop.tui.core.analysis import Analysis
from ranktop.tui.core.findings import Findings, cannot_judge, exit_code
from ranktop.tui.core.model import Frame, Health, RankMap, SourceStatus

OK = SourceStatus("prometheus", Health.OK, since=0.0)


def findings(frame: Frame | None, rank_map: RankMap) -> Findings:
    up = tuple(frame.ranks_up(len(rank_map))) if frame is not None else ()
    return Findings("job", Analysis(OK, rank_map, frame=frame, up=up))


def test_no_answer_yet_cannot_be_judged():
    none = findings(None, RankMap.grid(["a"], 8, "test"))
    assert cannot_judge(none).startswith("the source could not be read")
    assert exit_code(none) == 1


def test_an_answer_without_a_rank_is_no_all_clear():
    empty = findings(Frame(10.0, {}), RankMap((), (), 0, "nothing yet"))
    assert cannot_judge(empty) == "no rank of the job is known"
    assert exit_code(empty) == 1


def test_an_answer_with_every_rank_up_is_healthy():
    ranks = RankMap.grid(["a"], 2, "test")
    healthy = findings(Frame(10.0, {"step_time": [0.5, 0.5]}), ranks)
    assert (cannot_judge(healthy), exit_code(healthy)) == ("", 0)
