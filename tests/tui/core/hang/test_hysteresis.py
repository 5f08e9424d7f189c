"""A hang verdict holds still: a dead rank's verdict stays on screen, on the same row and
with the same start, while the rest of the job waits for it; it ends once the rank is back
and the job runs (simulator -> logs -> triage -> analysis). A job that steps on without
the rank is another story: ``test_analysis_progress``."""

from __future__ import annotations

from pathlib import Path

from ranktop.tui.simulator.scenario import Fault

from tests.tui.conftest import START
from tests.tui.core.job_run import hang_rows, job, polls

DEAD = 13


def test_a_dead_rank_stays_the_verdict_while_the_others_wait(tmp_path: Path) -> None:
    death = Fault("rank_death", DEAD, 20.0, 80.0, {"dumps": "none"})
    seen: list[tuple[float, list]] = []
    for analysis in polls(job((death,)), tmp_path, until=130.0):
        seen.append((analysis.frame.time - START, hang_rows(analysis)))
    during = [(t, rows) for t, rows in seen if 30.0 <= t < 100.0]
    assert all(len(rows) == 1 and rows[0].rank == DEAD for _, rows in during), during
    assert len({rows[0].since for _, rows in during}) == 1  # one hang, one start
    assert all(rows[0].confirmed for _, rows in during)
    after = [rows for t, rows in seen if t >= 110.0]
    assert after and all(rows == [] for rows in after)  # back, and the job runs: over
