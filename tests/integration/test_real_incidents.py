"""The recorded incidents of the real job (``bench/realjob``), replayed against a real
Prometheus: ranktop's verdicts at the incident's moments, held against the rig's truth.

A check that names an open issue is a verdict known wrong today: it is expected to fail
(strictly: once it passes, the mark must go), so each recording states what ranktop gets
right and wrong on the real stack."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.realjob.checks import CHECKS, judge_recording
from bench.realjob.replay import replayed

RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
NAMES = sorted(path.parent.name for path in RECORDINGS.glob("*/incident.tar.gz"))


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, dict[str, tuple[bool, str]]]:
    """Every check of every recording, judged once for the module."""
    judged = {}
    for name in NAMES:
        folder = tmp_path_factory.mktemp(name)
        with replayed(RECORDINGS / name, folder) as replay:
            judged[name] = {check.name: (right, said)
                            for check, right, said in judge_recording(replay)}
    return judged


def _cases() -> list:
    import json

    cases = []
    for name in NAMES:
        fault = json.loads((RECORDINGS / name / "truth.json").read_text())["fault"]
        for check in CHECKS[fault]:
            marks = [pytest.mark.xfail(strict=True, reason=f"issue {check.issue}")] \
                if check.issue else []
            cases.append(pytest.param(name, check.name, marks=marks,
                                      id=f"{name}: {check.name}"))
    return cases


def test_there_are_recordings_of_each_fault() -> None:
    import json

    faults = {json.loads((RECORDINGS / n / "truth.json").read_text())["fault"] for n in NAMES}
    assert faults == set(CHECKS)


@pytest.mark.parametrize(("recording", "check"), _cases())
def test_verdict_on_the_recorded_incident(outcomes, recording: str, check: str) -> None:
    right, said = outcomes[recording][check]
    assert right, f"{recording}, {check}: ranktop said {said}"


@pytest.mark.parametrize("recording", NAMES)
def test_a_report_after_the_job_ended_gives_its_last_moment(recording: str, tmp_path) -> None:
    """Live, long after the recorded job was stopped (paged after it died): the report says
    when its series ended and gives the verdicts of their last moment, not "cannot judge"."""
    from datetime import datetime

    from bench.realjob.checks import report_at

    with replayed(RECORDINGS / recording, tmp_path) as replay:
        report = report_at(replay, None)
    ended, truth = report["ended"], replay.truth
    assert ended is not None, report["cannot_judge"]
    assert abs(ended["time"] - truth["ended"]) < 15  # the rig stopped the job then
    assert ended["said"].startswith("the job's series ended at ")
    at = datetime.fromisoformat(report["at"]).timestamp()
    assert ended["time"] - 2 < at <= ended["time"] and report["live"] is False
    assert report["cannot_judge"] is None and report["ranks"]["total"] == truth["world"]
    assert report["ranks"]["up"] > 0 and report["healthy"] is False
