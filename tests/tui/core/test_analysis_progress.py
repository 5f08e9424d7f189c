"""Progress is the arbiter: a job whose step goes on after a rank's series vanished (a
replica group dropped, the rest training on at 6 s a step) has not stopped and does not
hang. It is never told to restart, the rank stays a ``missing`` root of its own, and a
stall of the job, while it crawls and when it stops the step, is a root of its own too
(simulator -> logs -> triage -> analysis)."""

from __future__ import annotations

from pathlib import Path

from ranktop.tui.core.advice.action import NOTHING, RESTART
from ranktop.tui.core.advice.advise import action_on
from ranktop.tui.core.analysis import Analysis
from ranktop.tui.core.detect.goodput import HANG, STALL
from ranktop.tui.simulator.scenario import Fault

from tests.tui.conftest import START
from tests.tui.core.job_run import hang_rows, job, polls

DEAD = 13
DEATH = 20.0
# two steps of 6 s after the death, and a poll: the job is seen to step on without the rank
STEPPED_ON = DEATH + 2 * 6.0
STALL_START, STALL_SECONDS = 60.0, 40.0


def seen(faults: tuple[Fault, ...], tmp_path: Path, until: float
         ) -> list[tuple[float, Analysis]]:
    return [(a.frame.time - START, a) for a in polls(job(faults), tmp_path, until=until)]


def test_a_job_stepping_on_without_a_dead_rank_is_not_told_to_restart(tmp_path: Path) -> None:
    death = Fault("rank_death", DEAD, DEATH, 120.0, {"others_step": 6.0, "dumps": "none"})
    stall = Fault("job_stall", None, STALL_START, STALL_SECONDS)
    on = [(t, a) for t, a in seen((death, stall), tmp_path, until=136.0) if t >= STEPPED_ON]
    assert on
    for t, analysis in on:
        assert analysis.left_behind == {DEAD}, t
        assert RESTART not in [a.kind for a in analysis.actions], t
        assert hang_rows(analysis) == [], t
        gone = next(i for i in analysis.incidents if i.rank == DEAD)
        assert (gone.root.kind, gone.explained) == ("missing", ()), t
        said = action_on(analysis.actions, DEAD, analysis.rank_map)
        assert said is not None and said.kind == NOTHING and "goes on without it" in said.text
    stalls = [i for _, a in on for i in a.incidents if "job_stall" in {m.kind for m in i.members}]
    assert stalls and all(i.root.kind == "job_stall" for i in stalls)
    # The stall that stops the step: the job stands still, its stall confirmed and its own.
    stopped = [a for t, a in on if STALL_START + 20.0 <= t < STALL_START + STALL_SECONDS]
    assert stopped and all(a.progress.stalled(a.frame.time) for a in stopped)
    assert all(any(i.root.kind == "job_stall" and i.root.confirmed for i in a.incidents)
               for a in stopped)
    lost = on[-1][1].goodput.lost
    assert lost[STALL] > 5 * lost.get(HANG, 0.0)  # only the seconds before it stepped on


def test_a_dead_rank_the_job_waits_for_still_stops_it(tmp_path: Path) -> None:
    death = Fault("rank_death", DEAD, DEATH, 80.0, {"dumps": "none"})
    during = [a for t, a in seen((death,), tmp_path, until=60.0) if t >= STEPPED_ON]
    for analysis in during:
        assert analysis.left_behind == frozenset()
        restart = next(a for a in analysis.actions if a.kind == RESTART)
        assert restart.evidence == f"stopped by missing on rank {DEAD}"
        assert [m.kind for m in next(i for i in analysis.incidents if i.rank == DEAD).members
                ][:2] == ["missing", "hang"]
