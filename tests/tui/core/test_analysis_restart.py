"""A restart's cost through the console's own pipeline: a job that steps at its healthy pace,
then hangs in an all-reduce; the restart resumes from the checkpoint metric, the logs'
checkpoint line is read by hang triage, and the lost work is priced at the healthy step."""

from __future__ import annotations

import pytest
from ranktop.tui.core.advice.advise import RESTART
from ranktop.tui.core.hang.checkpoint import LOG, METRIC
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.scenario import Fault, Scenario

from tests.tui.core.job_run import polls

HANG_AT = 60.0  # ~53 steps in: the job saved at 120,040 (every 20 steps)
BASE_STEP = 1.12


def hung_job() -> SimCluster:
    hang = Fault("collective_hang", 5, HANG_AT, 200.0, {"cause": "missing", "dumps": "none"})
    scenario = Scenario("job", 300.0, BASE_STEP, 4194304, (hang,), checkpoint_every_steps=20)
    return SimCluster(4, 8, seed=3, scenario=scenario)


def test_a_hung_jobs_restart_resumes_from_its_checkpoint_at_the_healthy_steps_cost(tmp_path):
    analyses = list(polls(hung_job(), tmp_path, until=130.0))
    last = analyses[-1]
    (restart,) = [a for a in last.actions if a.kind == RESTART]
    cost = restart.cost
    assert cost.checkpoint.step == 120_040 and cost.checkpoint.source == METRIC
    step = last.frame.job["step"]
    assert cost.steps_lost == step - 120_040 > 0
    assert last.goodput.baseline_step == pytest.approx(BASE_STEP, rel=0.02)
    assert cost.gpu_hours_lost == pytest.approx(cost.steps_lost * BASE_STEP * 32 / 3600,
                                                rel=0.02)
    # stopped since the step last moved, and growing poll by poll
    assert cost.stopped_seconds == pytest.approx(last.frame.time - last.progress.still_since)
    earlier = next(a for a in analyses[-3].actions if a.kind == RESTART).cost
    assert cost.idle_gpu_hours == pytest.approx(earlier.idle_gpu_hours + 4.0 * 32 / 3600)
    # the logs' line says the same checkpoint: rank 0's, read by the hang triage
    found = last.hang.checkpoint
    assert (found.step, found.source, found.rank) == (120_040, LOG, 0)
    assert "successfully saved checkpoint from iteration  120040" in found.line
