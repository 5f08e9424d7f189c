"""A restart's cost: the checkpoint it resumes from, the steps and GPU-hours it loses, the
GPU-hours idle so far; on the restart action, from the metric or else the logs."""

from __future__ import annotations

import math

import pytest
from ranktop.tui.core.advice.advise import RESTART, Seen, advise
from ranktop.tui.core.advice.incidents import incidents
from ranktop.tui.core.advice.restart_cost import (
    JobStop,
    restart_cost,
)
from ranktop.tui.core.detect.down import DownRank
from ranktop.tui.core.hang.checkpoint import LOG, METRIC, Checkpoint
from ranktop.tui.core.hang.triage import HangVerdict
from ranktop.tui.core.model import Frame

from tests.tui.core.advice.test_advise import RANKS, anomaly, frame

GPUS = 512


def stop(now: float = 1130.0, step: float = 12_387.0, since: float | None = 1000.0,
         step_seconds: float = 1.15, gpus: int = GPUS) -> JobStop:
    return JobStop(now, step, since, step_seconds, gpus)


def test_the_work_since_the_checkpoint_is_lost_and_the_stop_costs_idle_gpu_hours():
    cost = restart_cost(stop(), Checkpoint(12_300, METRIC))
    assert cost.steps_lost == 87
    assert cost.gpu_hours_lost == pytest.approx(87 * 1.15 * 512 / 3600)  # 14.2
    assert cost.stopped_seconds == 130.0
    assert cost.idle_gpu_hours == pytest.approx(130 * 512 / 3600)  # 18.5
    assert cost.text == ("resumes from step 12,300 (checkpoint metric), losing 87 steps = "
                         "14.2 GPU-hours; stopped 2 min: 18.5 GPU-hours idle so far")


def test_the_idle_gpu_hours_grow_with_each_poll_while_the_job_stays_stopped():
    first = restart_cost(stop(now=1060.0), Checkpoint(12_300, METRIC))
    later = restart_cost(stop(now=1960.0), Checkpoint(12_300, METRIC))
    assert later.idle_gpu_hours == pytest.approx(first.idle_gpu_hours * 16)
    assert later.gpu_hours_lost == first.gpu_hours_lost


def test_without_a_checkpoint_it_says_so_and_how_to_configure_one():
    cost = restart_cost(stop(), None)
    assert cost.steps_lost is None and cost.gpu_hours_lost is None
    assert cost.text.startswith("no checkpoint known (export the job's last saved step as "
                                "[job_metrics] checkpoint_step, or give the ranks' logs "
                                "([logs] spec) and, for a line of the job's own, [logs] "
                                "checkpoint_pattern); ")
    assert cost.text.endswith("stopped 2 min: 18.5 GPU-hours idle so far")


def test_unknown_figures_are_none_never_nan():
    cost = restart_cost(stop(step=math.nan, since=None, step_seconds=math.nan),
                        Checkpoint(12_300, LOG, "saved", 0))
    assert (cost.steps_lost, cost.gpu_hours_lost, cost.stopped_seconds,
            cost.idle_gpu_hours) == (None, None, None, None)
    assert cost.text == "resumes from step 12,300 (log); stopped since: unknown"
    no_pace = restart_cost(stop(step_seconds=math.nan), Checkpoint(12_300, METRIC))
    assert no_pace.steps_lost == 87 and no_pace.gpu_hours_lost is None


def test_a_checkpoint_ahead_of_the_step_loses_nothing():
    assert restart_cost(stop(), Checkpoint(12_400, METRIC)).steps_lost == 0


def test_a_checkpoint_read_from_a_log_says_whose_and_the_line():
    cost = restart_cost(stop(), Checkpoint(12_300, LOG, "saved checkpoint ... 12300", 0))
    assert cost.read_from == "checkpoint read from rank 0's log: saved checkpoint ... 12300"
    assert restart_cost(stop(), Checkpoint(12_300, METRIC)).read_from == ""


def restart_of(seen_frame: Frame, hang: HangVerdict | None, job_stop: JobStop | None,
               died_at: float = 1000.0):
    down = {13: DownRank(13, 998.0, 996.0, {"xid": 79.0})}
    seen = Seen(RANKS, seen_frame, down, {}, hang, stop=job_stop)
    died = anomaly("missing", 13, held=1000.0 - died_at)  # anomaly() dates it from 1000
    actions = advise(incidents([anomaly("xid", 13, "79"), died], RANKS), seen)
    return next(a for a in actions if a.kind == RESTART)


def with_job(seen_frame: Frame, **job: float) -> Frame:
    return Frame(seen_frame.time, seen_frame.values, job=job)


def hang_with(checkpoint: Checkpoint | None) -> HangVerdict:
    return HangVerdict(reporting=[], silent=[], behind=[13], last_completed={}, evidence={},
                       summary="rank 13 died", dead=[13], checkpoint=checkpoint)


def test_the_restart_action_says_from_which_step_it_resumes_and_what_it_costs():
    restart = restart_of(with_job(frame(dead=13), step=12_387.0, checkpoint_step=12_300.0),
                         None, stop(gpus=len(RANKS)))
    assert restart.cost is not None and restart.cost.checkpoint == Checkpoint(12_300, METRIC)
    assert restart.text == ("restart the job (stopped by XID 79 on rank 13): resumes from step "
                            "12,300 (checkpoint metric), losing 87 steps = 0.9 GPU-hours; "
                            "stopped 2 min: 1.2 GPU-hours idle so far")


def test_without_the_metric_the_restart_resumes_from_the_logs_checkpoint():
    line = "successfully saved checkpoint from iteration   12200 to /ckpt"
    restart = restart_of(with_job(frame(dead=13), step=12_387.0),
                         hang_with(Checkpoint(12_200, LOG, line, 0)), stop())
    assert restart.cost.checkpoint.step == 12_200 and restart.cost.steps_lost == 187
    assert "resumes from step 12,200 (log)" in restart.text


def test_the_metric_wins_over_the_logs():
    restart = restart_of(with_job(frame(dead=13), checkpoint_step=12_300.0),
                         hang_with(Checkpoint(12_200, LOG, "saved", 0)), stop())
    assert restart.cost.checkpoint == Checkpoint(12_300, METRIC)


def test_with_neither_the_restart_says_no_checkpoint_is_known():
    restart = restart_of(frame(dead=13), hang_with(None), stop())
    assert restart.cost.checkpoint is None
    assert "no checkpoint known" in restart.text


def test_a_stop_dates_from_what_stopped_the_job_when_that_began_earlier():
    # a report's single poll has not seen the step stand still: the death dates the stop
    restart = restart_of(frame(dead=13), None, stop(since=None), died_at=940.0)
    assert restart.cost.stopped_seconds == 190.0
    assert restart_of(frame(dead=13), None, stop(since=1000.0), died_at=940.0
                      ).cost.stopped_seconds == 190.0
    assert restart_of(frame(dead=13), None, stop(since=1000.0), died_at=1020.0
                      ).cost.stopped_seconds == 130.0
