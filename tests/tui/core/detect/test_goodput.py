"""The goodput ledger on fake times: progress against the healthy step, the rest laid at
the door of its cause, over the last hour and since the start."""

from __future__ import annotations

import math

import pytest
from ranktop.tui.core.anomaly import Anomaly
from ranktop.tui.core.detect.goodput import (
    HOUR_SECONDS,
    MOST_ENTRIES,
    Goodput,
    GoodputLedger,
    share_text,
)

STEP = 1.0  # the healthy step, seconds
POLL = 2.0


def anomaly(kind: str, since: float, rank: int | None = None) -> Anomaly:
    return Anomaly(kind, "critical", rank, kind, since)


class Job:
    """A ledger fed a job polled every ``POLL`` seconds, whose step and anomalies the test
    moves."""

    def __init__(self) -> None:
        self.ledger = GoodputLedger()
        self.now = 0.0
        self.step = 1000.0

    def run(self, seconds: float, pace: float = STEP, anomalies=(), reported=None) -> Goodput:
        """Polls over ``seconds`` with a step every ``pace`` seconds (inf: none); the
        median step time reported is ``reported`` (the pace unless said)."""
        for _ in range(round(seconds / POLL)):
            self.now += POLL
            if not math.isinf(pace):
                self.step += POLL / pace
            told = pace if reported is None else reported
            self.ledger.feed(self.now, math.floor(self.step), anomalies,
                             told if not math.isinf(told) else math.nan)
        return self.value()

    def value(self) -> Goodput:
        return self.ledger.value(self.now)


def test_a_healthy_job_makes_progress_all_the_time() -> None:
    job = Job()
    found = job.run(600)
    assert found.hour == pytest.approx(1.0, abs=0.01)
    assert found.baseline_step == pytest.approx(STEP)
    assert sum(found.lost.values()) < 2.0


def test_a_hang_loses_its_time_to_the_hang() -> None:
    job = Job()
    job.run(600)
    hang = [anomaly("hang", job.now)]
    found = job.run(200, pace=math.inf, anomalies=hang)
    assert found.hour == pytest.approx(600 / 800, abs=0.01)
    assert found.lost["hang"] == pytest.approx(200, abs=2)


def test_a_straggler_loses_the_time_beyond_the_healthy_step() -> None:
    job = Job()
    job.run(600)
    found = job.run(400, pace=1.25, anomalies=[anomaly("straggler", job.now, rank=3)])
    assert found.lost["slowdown"] == pytest.approx(400 * (1 - 1 / 1.25), abs=2)
    assert found.baseline_step == pytest.approx(STEP)  # the slow steps are not the norm


def test_time_lost_before_an_anomaly_was_confirmed_goes_to_it_once_it_shows() -> None:
    job = Job()
    job.run(600)
    began = job.now
    job.run(40, pace=math.inf)  # a stall the detector has not seen yet
    assert job.value().lost.get("stall", 0.0) == 0.0
    found = job.run(20, pace=math.inf, anomalies=[anomaly("job_stall", began)])
    assert found.lost["stall"] == pytest.approx(60, abs=2)
    assert found.lost.get("unknown", 0.0) < 2.0


def test_a_stronger_cause_takes_the_time_a_weaker_one_held() -> None:
    job = Job()
    job.run(600)
    began = job.now
    job.run(20, pace=math.inf, anomalies=[anomaly("throughput", began)])
    found = job.run(20, pace=math.inf, anomalies=[anomaly("throughput", began),
                                                 anomaly("missing", began, rank=5)])
    assert found.lost["hang"] == pytest.approx(40, abs=2)
    assert found.lost.get("slowdown", 0.0) < 2.0


def test_steps_done_again_after_a_restart_are_lost_to_the_restart() -> None:
    job = Job()
    job.run(600)
    job.step -= 100  # back to the checkpoint, 100 steps ago
    found = job.run(300)
    assert found.lost["restart"] == pytest.approx(100 * STEP, abs=3)
    assert found.hour == pytest.approx(800 / 900, abs=0.01)


def test_an_absent_step_counter_is_a_restart_and_none_at_all_is_unknown() -> None:
    job = Job()
    job.run(600)
    for _ in range(30):
        job.now += POLL
        job.ledger.feed(job.now, math.nan, [])
    assert job.value().lost["restart"] == pytest.approx(60, abs=1)
    never = GoodputLedger()
    for t in range(10):
        never.feed(t * POLL, math.nan, [])
    assert math.isnan(never.value(20.0).hour)
    assert share_text(never.value(20.0)) == ""


def test_the_baseline_is_the_calm_polls_step_not_the_current_one() -> None:
    job = Job()
    job.run(300)
    # An hour of a slow job, its slowness flagged: the healthy step stays the calm one.
    found = job.run(3600, pace=1.5, anomalies=[anomaly("fail_slow", job.now)])
    assert found.baseline_step == pytest.approx(STEP)
    assert found.hour == pytest.approx(1 / 1.5, abs=0.01)


def test_a_few_slow_calm_minutes_barely_move_the_baseline() -> None:
    job = Job()
    job.run(1200)
    job.run(120, pace=1.3)  # slow, and nothing flagged it
    job.run(600)
    assert job.value().baseline_step == pytest.approx(STEP, abs=0.01)


def test_without_a_step_time_metric_the_counter_gives_the_baseline() -> None:
    job = Job()
    found = job.run(600, pace=0.5, reported=math.inf)
    assert found.baseline_step == pytest.approx(0.5, abs=0.01)
    assert found.hour == pytest.approx(1.0, abs=0.02)


def test_the_hour_forgets_what_is_older_and_since_start_keeps_it() -> None:
    job = Job()
    job.run(1800, pace=math.inf)  # stuck for half an hour ...
    job.ledger.baseline.calm(job.now, STEP, POLL, POLL / STEP)
    found = job.run(HOUR_SECONDS + 600)  # ... then running for more than an hour
    assert found.hour == pytest.approx(1.0, abs=0.01)
    assert found.whole_hour
    assert found.since_start == pytest.approx((HOUR_SECONDS + 600) / (HOUR_SECONDS + 2400),
                                              abs=0.01)
    assert len(job.ledger._recent) + len(job.ledger._folded) <= 600 / POLL + 60 + 2


def test_the_hour_is_kept_by_the_minute_and_cause_whatever_the_poll() -> None:
    ledger = GoodputLedger()
    for i in range(MOST_ENTRIES + 500):
        ledger.feed(i * 0.2, float(i), [], 0.2)
    assert len(ledger._recent) <= MOST_ENTRIES
    assert len(ledger._folded) <= HOUR_SECONDS / 60 + 1
    assert ledger.value(MOST_ENTRIES * 0.2).hour == pytest.approx(1.0)


def test_a_partial_hour_says_how_much_it_covers() -> None:
    job = Job()
    found = job.run(720)
    assert not found.whole_hour
    assert share_text(found) == "100 % (12 min)"
    assert share_text(job.run(HOUR_SECONDS)) == "100 %"


def test_a_seeded_past_covers_the_hour_and_tells_when_the_job_began() -> None:
    ledger = GoodputLedger()
    began = 1000.0
    # The job began 40 minutes before the first frame, then stepped every second, but for
    # a ten-minute stop.
    steps, step = [], 0.0
    for t in range(int(began), int(began + 2400), 20):
        if not began + 1200 <= t < began + 1800:
            step += 20
        steps.append((float(t), step))
    ledger.seed(steps, began + 2400 - HOUR_SECONDS)
    now = began + 2400
    for i in range(30):
        ledger.feed(now + i * POLL, step + i * POLL, [], STEP)
    found = ledger.value(now + 29 * POLL)
    assert found.job_began == began
    assert found.covered == pytest.approx(2400 + 58, abs=21)
    assert found.hour == pytest.approx(1 - 600 / found.covered, abs=0.02)
    assert found.job == pytest.approx(found.hour, abs=0.001)
    assert found.since_start == pytest.approx(1.0, abs=0.02)  # only what it watched


def test_a_past_reaching_back_past_the_job_start_is_not_its_start() -> None:
    ledger = GoodputLedger()
    ledger.seed([(float(t), float(t)) for t in range(0, 3600, 20)], 0.0)
    ledger.feed(3600.0, 3600.0, [], STEP)
    assert ledger.value(3600.0).job_began is None
    assert math.isnan(ledger.value(3600.0).job)


def test_a_source_holding_nothing_before_the_first_frame_sees_the_job_begin_with_it() -> None:
    ledger = GoodputLedger()
    ledger.seed([], -HOUR_SECONDS)
    for i in range(10):
        ledger.feed(i * POLL, 100.0 + i * POLL, [], STEP)
    found = ledger.value(9 * POLL)
    assert found.job_began == 0.0
    assert found.job == pytest.approx(found.since_start)


def test_the_interval_in_which_a_condition_ended_is_still_its() -> None:
    job = Job()
    job.run(600)
    job.run(20, pace=math.inf, anomalies=[anomaly("job_stall", job.now)])
    found = job.run(2, pace=math.inf)  # gone by the next poll, which saw no step yet
    assert found.lost["stall"] == pytest.approx(22, abs=1)
    assert found.lost.get("unknown", 0.0) < 1.0


def test_a_hang_confirmed_late_began_when_the_step_last_moved() -> None:
    job = Job()
    job.run(600)
    stopped = job.now
    job.run(30, pace=math.inf, anomalies=[anomaly("job_stall", stopped + 10)])
    found = job.run(10, pace=math.inf, anomalies=[anomaly("job_stall", stopped + 10),
                                                 anomaly("hang", stopped + 30)])
    assert found.lost["hang"] == pytest.approx(40, abs=1)
    assert found.lost.get("stall", 0.0) < 1.0


def test_a_counter_back_lower_after_an_absence_is_a_restart() -> None:
    job = Job()
    job.run(600)
    for _ in range(10):  # the job is down: no counter
        job.now += POLL
        job.ledger.feed(job.now, math.nan, [])
    job.step -= 50  # back from its checkpoint
    found = job.run(100, pace=math.inf)  # ... and loading it
    assert found.lost["restart"] == pytest.approx(120, abs=1)
    found = job.run(200)
    assert found.lost["restart"] == pytest.approx(120 + 50 * STEP, abs=3)
    assert found.lost.get("unknown", 0.0) < 2.0


def test_a_coarse_older_past_finds_where_the_job_began_before_the_hour() -> None:
    ledger = GoodputLedger()
    # The job began at 4,000 s and ran at full speed, then at half speed for the last hour.
    hour = [(float(t), 6_000 + (t - 10_000) / 2) for t in range(10_000, 13_600, 20)]
    ledger.seed(hour, 10_000.0)
    assert ledger.job_older_than_seed
    older = [(float(t), float(t - 4_000)) for t in range(4_000, 10_000, 600)]
    ledger.seed_job(older, 10_000.0 - 14 * 24 * HOUR_SECONDS)
    ledger.feed(13_600.0, 7_800.0, [], STEP)
    found = ledger.value(13_600.0)
    assert found.job_began == 4_000.0
    assert found.job == pytest.approx((6_000 + 1_800) / 9_600, abs=0.005)
    assert found.hour == pytest.approx(0.5, abs=0.005)


def test_an_older_past_that_runs_to_the_backends_horizon_is_not_the_jobs_start() -> None:
    ledger = GoodputLedger()
    ledger.seed([(float(t), float(t)) for t in range(10_000, 13_600, 20)], 10_000.0)
    ledger.seed_job([(float(t), float(t)) for t in range(0, 10_000, 600)], 0.0)
    ledger.feed(13_600.0, 13_600.0, [], STEP)
    assert ledger.value(13_600.0).job_began is None


def test_a_job_begun_just_before_the_seeded_hour_began_with_it() -> None:
    ledger = GoodputLedger()
    ledger.seed([(float(t), float(t)) for t in range(10_000, 13_600, 20)], 10_000.0)
    ledger.seed_job([], 10_000.0 - 14 * 24 * HOUR_SECONDS)  # nothing further back
    ledger.feed(13_600.0, 13_600.0, [], STEP)
    found = ledger.value(13_600.0)
    assert found.job_began == 10_000.0
    assert found.job == pytest.approx(1.0, abs=0.01)


def test_nothing_is_said_before_a_calm_minute() -> None:
    job = Job()
    job.run(4, pace=2 * STEP, reported=2 * STEP)  # a job's first seconds: warming up
    early = job.run(30)
    assert not early.known and share_text(early) == ""  # not "56 % (34 s)"
    settled = job.run(30)
    assert settled.known and share_text(settled).endswith("(1 min)")


def test_a_baseline_from_the_sources_past_needs_no_calm_minute() -> None:
    job = Job()
    job.ledger.seed([(t, 1000.0 + t / STEP) for t in range(-600, 1, 10)], -600.0)
    job.step = 1000.0
    assert job.run(4).known
