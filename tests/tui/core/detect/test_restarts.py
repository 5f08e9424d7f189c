"""Restarts on record: who died first, when the job stepped again, from which step, what it
cost; kept for the goodput hour or until dismissed, never made of a glitch."""

from __future__ import annotations

import math

import pytest
from ranktop.tui.core.detect.down import DownRank
from ranktop.tui.core.detect.goodput import HOUR_SECONDS
from ranktop.tui.core.detect.restarts import KIND, RestartWatch

T0 = 1_800_000_000.0
GPUS = 8


def gone(rank: int, since: float, last_seen: float, fault: str = "") -> DownRank:
    return DownRank(rank, since, last_seen, fault=fault)


def run(watch: RestartWatch, polls, dead: tuple[int, ...] = ()) -> tuple:
    """Feed ``polls`` of (seconds, step, down ranks, named ranks), ``dead`` the ranks a
    verdict saw exit; the last answer."""
    found = ()
    for seconds, step, down, named in polls:
        found = watch.update(T0 + seconds, step, {g.rank: g for g in down}, named, 0.5, GPUS,
                             dead=dead)
    return found


def torchrun_restart() -> list:
    """Steps 0..120 a step a second; rank 2 vanishes at 121 (rank 1 the poll after), all
    are back at 150 stepping from the checkpoint at step 100."""
    healthy = [(s, float(s), [], []) for s in range(0, 121)]
    outage = [(121, 120.0, [gone(2, T0 + 121, T0 + 120)], []),
              (122, 120.0, [gone(2, T0 + 121, T0 + 120), gone(1, T0 + 122, T0 + 121)], []),
              (140, math.nan, [gone(2, T0 + 121, T0 + 120), gone(1, T0 + 122, T0 + 121)], [])]
    back = [(150, 100.0, [], []), (152, 102.0, [], [])]
    return healthy + outage + back


def test_a_restart_from_a_checkpoint_names_the_first_rank_gone_and_what_it_cost():
    (restart,) = run(RestartWatch(), torchrun_restart())
    assert restart.rank == 2 and restart.died == T0 + 121
    assert restart.resumed == T0 + 150 and restart.from_step == 100
    assert restart.attempt == 1 and restart.steps_lost == 20
    # 29 s down and 20 steps of 0.5 s done again, on 8 GPUs
    assert restart.gpu_hours_lost == pytest.approx((29 + 20 * 0.5) * GPUS / 3600)
    # only its series vanished first: no exit seen, so not said to have died
    assert "rank 2 went down first at 08:02:01" in restart.summary
    (exited,) = run(RestartWatch(), torchrun_restart(), dead=(2,))
    assert "rank 2 died at 08:02:01" in exited.summary
    assert "the job restarted from step 100 at" in restart.summary
    assert "(attempt 1) · 20 steps and 0.1 GPU-hours lost" in restart.summary
    anomaly = restart.anomaly
    assert (anomaly.kind, anomaly.rank, anomaly.since) == (KIND, 2, T0 + 121)
    assert anomaly.confirmed


def test_ranks_gone_in_the_same_poll_the_one_a_verdict_named_died_first():
    same = [gone(1, T0 + 121, T0 + 120), gone(2, T0 + 121, T0 + 120)]
    polls = [(s, float(s), [], []) for s in range(0, 121)]
    polls += [(121, 120.0, same, [2]), (150, 100.0, [], [])]
    (restart,) = run(RestartWatch(), polls)
    assert restart.rank == 2
    (unnamed,) = run(RestartWatch(), [*polls[:-2], (121, 120.0, same, []), polls[-1]])
    # nothing tells them apart: no rank is claimed, the ranks gone together are said
    assert (unnamed.rank, unnamed.together) == (None, (1, 2))
    assert "ranks 1, 2 went down together at" in unnamed.summary


def test_a_dead_rank_back_after_the_job_stood_still_is_a_restart_with_its_fault():
    polls = [(s, float(s), [], []) for s in range(0, 50)]
    dead = [gone(5, T0 + 50, T0 + 49, fault="XID 79: GPU has fallen off the bus")]
    polls += [(s, 50.0, dead, []) for s in range(50, 80, 2)]
    polls += [(80, 50.0, [], []), (82, 52.0, [], [])]
    (restart,) = run(RestartWatch(), polls)
    assert (restart.rank, restart.from_step, restart.steps_lost) == (5, 50, 0)
    assert "rank 5 died (XID 79: GPU has fallen off the bus) at" in restart.summary


def test_a_rank_missing_a_poll_while_the_job_steps_on_is_no_restart():
    polls = [(s, float(s), [], []) for s in range(0, 50)]
    polls += [(50, 50.0, [gone(3, T0 + 50, T0 + 49)], []), (52, 52.0, [], [])]
    polls += [(s, float(s), [], []) for s in range(53, 70)]
    assert run(RestartWatch(), polls) == ()


def test_a_restart_is_kept_for_the_hour_then_forgotten_and_a_dismissed_one_at_once():
    watch = RestartWatch()
    (restart,) = run(watch, torchrun_restart())
    later = watch.update(T0 + 150 + HOUR_SECONDS - 1, 5000.0, {}, (), 0.5, GPUS)
    assert later == (restart,)
    assert watch.update(T0 + 151 + HOUR_SECONDS, 5001.0, {}, (), 0.5, GPUS) == ()
    dismissed = RestartWatch()
    (again,) = run(dismissed, torchrun_restart())
    dismissed.dismiss(again)
    assert dismissed.current(T0 + 160) == ()


def test_each_restart_counts_as_its_own_attempt():
    polls = torchrun_restart()
    second = [(s, float(s) - 50, [], []) for s in range(153, 200)]
    second += [(200, 149.0, [gone(6, T0 + 200, T0 + 199)], []), (230, 140.0, [], [])]
    newest, first = run(RestartWatch(), polls + second)
    assert (first.attempt, newest.attempt) == (1, 2)
    assert (newest.rank, newest.from_step) == (6, 140)


def test_a_job_that_stood_still_is_restarted_though_it_stepped_before_the_first_poll_back():
    polls = [(s, float(s), [], []) for s in range(0, 50)]
    polls += [(s, 50.0, [gone(5, T0 + 50, T0 + 49)], []) for s in range(50, 80, 2)]
    polls += [(80, 51.0, [], [])]
    (restart,) = run(RestartWatch(), polls)
    assert (restart.rank, restart.from_step, restart.resumed) == (5, 50, T0 + 80)


def test_ranks_back_while_the_job_still_stands_still_are_no_restart_until_it_steps():
    polls = [(s, float(s), [], []) for s in range(0, 50)]
    polls += [(s, 50.0, [gone(5, T0 + 50, T0 + 49)], []) for s in range(50, 80, 2)]
    polls += [(s, 50.0, [], []) for s in range(80, 90, 2)]
    watch = RestartWatch()
    assert run(watch, polls) == ()
    (restart,) = run(watch, [(90, 51.0, [], [])])
    assert (restart.resumed, restart.from_step, restart.steps_lost) == (T0 + 90, 50, 0)


def test_a_restart_with_no_rank_seen_going_stopped_when_the_job_last_stepped():
    # A console whose backend began scraping while a rank was already gone (never seen,
    # so never down): the job stood still at step 60 from 30 s on, and stepped again from
    # its checkpoint at 90 s. It stopped after 30 s, not when it came back.
    polls = [(s, 30.0 + s, [], []) for s in range(0, 31)]
    polls += [(s, 60.0, [], []) for s in range(32, 90, 2)]
    polls += [(90, 50.0, [], []), (92, 52.0, [], [])]
    (restart,) = run(RestartWatch(), polls)
    assert (restart.rank, restart.died, restart.resumed) == (None, T0 + 30, T0 + 90)
    assert "the job stopped after 08:00:30 (who died: not seen)" in restart.summary
    assert restart.gpu_hours_lost == pytest.approx((60 + 10 * 0.5) * GPUS / 3600)


def test_the_job_resumes_from_its_last_checkpoint_before_the_death_where_known():
    watch = RestartWatch()
    found = ()
    for seconds, step, down, named in torchrun_restart():
        # saved every 25 steps; the new group exports its checkpoint again once it saves
        checkpoint = math.nan if seconds >= 150 else float(step // 25 * 25)
        found = watch.update(T0 + seconds, step, {g.rank: g for g in down}, named, 0.5, GPUS,
                             checkpoint if not math.isnan(step) else math.nan)
    (restart,) = found
    assert (restart.from_step, restart.steps_lost) == (100, 20)
    assert "restarted from step 100 at" in restart.summary


def test_a_restart_in_the_hour_before_the_first_poll_is_on_record_from_the_step_counter():
    watch = RestartWatch()
    watch.seed([(T0, 100.0), (T0 + 20, 140.0), (T0 + 40, 120.0), (T0 + 60, 150.0)])
    (restart,) = watch.current(T0 + 60)
    assert (restart.rank, restart.died, restart.resumed) == (None, T0 + 20, T0 + 40)
    assert (restart.from_step, restart.steps_lost, restart.attempt) == (120, 20, 1)
    assert "(who died: not seen)" in restart.summary
    # the polls that follow go on from there: no second restart of the same one
    assert watch.update(T0 + 62, 151.0, {}, (), 0.5, GPUS) == (restart,)
