"""The header's health: a poll overdue says LATE over good data, never over a source that
is already stale or down, whose reason stays on screen; at a past moment, the moment and
nothing about now."""

from __future__ import annotations

from dataclasses import replace

from ranktop.tui.core.detect.goodput import Goodput
from ranktop.tui.core.model import Frame, Health, SourceStatus
from ranktop.tui.core.moment import shown, shown_zoned
from ranktop.tui.screens.cluster_lines import JobView, folded_note, header
from rich.style import Style


def view(status: SourceStatus, polling_since: float | None) -> JobView:
    return JobView("job", status, None, 8, 8, now=100.0, paused=False, pause_key="p",
                   step_stuck_since=None, polling_since=polling_since, refresh_seconds=2.0)


def plain(view: JobView) -> str:
    return header(view, lambda role: Style()).plain


def test_a_poll_overdue_over_good_data_is_late() -> None:
    ok = SourceStatus("prometheus", Health.OK, since=0.0)
    assert "LATE: no answer for" in plain(view(ok, polling_since=95.0))
    assert "LATE" not in plain(view(ok, polling_since=99.0))  # within the refresh


def test_a_stale_source_keeps_its_reason_while_the_next_poll_is_late() -> None:
    stale = SourceStatus("prometheus", Health.STALE, since=55.0, message="connection refused")
    text = plain(view(stale, polling_since=90.0))
    assert "STALE for 45.0 s: connection refused" in text
    assert "LATE" not in text


def test_late_waits_for_twice_what_the_last_poll_took_where_that_is_longer() -> None:
    slow = SourceStatus("prometheus", Health.OK, since=0.0, poll_seconds=4.0)
    assert "LATE" not in plain(view(slow, polling_since=93.0))  # 7 s: polls take 4 s here
    assert "LATE: no answer for 9.0 s" in plain(view(slow, polling_since=91.0))


def stalled(status: SourceStatus, still_for: float) -> str:
    frame = Frame(time=100.0, values={}, job={"step": 10.0})
    return plain(JobView("job", status, frame, 8, 8, now=100.0, paused=False, pause_key="p",
                         step_stuck_since=100.0 - still_for, refresh_seconds=2.0))


def test_no_progress_waits_longer_where_samples_and_polls_are_slow() -> None:
    quick = SourceStatus("prometheus", Health.OK, since=0.0, poll_seconds=0.2,
                         sample_interval=1.0)
    assert "no progress for 12" in stalled(quick, 12.0)
    slow = SourceStatus("prometheus", Health.OK, since=0.0, poll_seconds=4.0,
                        sample_interval=5.0)
    assert "no progress" not in stalled(slow, 12.0)  # 5 s scrapes, 4 s polls: may be moving
    assert "no progress for 23" in stalled(slow, 23.0)


def at_moment(polling_since: float | None = None, replaying: float | None = None) -> str:
    """The header while the moment 60 s before now is shown, over a stale source."""
    stale = SourceStatus("prometheus", Health.STALE, since=55.0, message="connection refused")
    frame = Frame(time=40.0, values={}, job={"step": 10.0})
    return plain(JobView("job", stale, frame, 8, 8, now=100.0, paused=False, pause_key="p",
                         step_stuck_since=None, polling_since=polling_since,
                         refresh_seconds=2.0, moment=40.0, replaying=replaying,
                         live_key="L"))


def test_a_past_moment_is_said_and_nothing_claims_to_be_current() -> None:
    text = at_moment(polling_since=80.0)
    assert f"AT {shown_zoned(40.0)} · 60 s ago · press L for live" in text
    for current in ("STALE", "connection refused", "LATE", "data ", "waiting for"):
        assert current not in text
    assert f"loading {shown(38.0)}…" in at_moment(replaying=38.0)


def test_a_replay_under_way_is_said_over_the_live_job() -> None:
    ok = SourceStatus("prometheus", Health.OK, since=0.0)
    text = plain(JobView("job", ok, None, 8, 8, now=100.0, paused=False, pause_key="p",
                         step_stuck_since=None, replaying=38.0))
    assert f"loading {shown(38.0)}…" in text and "● ok" in text


def with_goodput(goodput: Goodput) -> str:
    ok = SourceStatus("demo", Health.OK, since=0.0)
    return plain(replace(view(ok, polling_since=None), goodput=goodput))


def test_the_header_gives_the_hours_goodput_and_how_much_of_the_hour_it_covers() -> None:
    assert "  goodput 87 %" in with_goodput(Goodput(hour=0.871, covered=3600.0))
    assert "  goodput 91 % (12 min)" in with_goodput(Goodput(hour=0.91, covered=720.0))
    assert "goodput" not in with_goodput(Goodput())  # unknown: nothing said


def test_the_folded_maps_are_said_once_as_no_gpu_data_or_as_one_metric_missing() -> None:
    assert folded_note([], any_gpu=False) == ""
    assert folded_note(["SM activity", "GPU temperature"], any_gpu=False) == (
        "no GPU metrics (DCGM) for this job: SM activity, GPU temperature not shown — see "
        "check-config")
    assert folded_note(["NVLink bandwidth"], any_gpu=True) == (
        "not exported for this job: NVLink bandwidth not shown — see check-config")


def test_without_an_answer_the_header_counts_no_rank_up() -> None:
    waiting = SourceStatus("Prometheus http://p:9090", Health.STALE, since=90.0,
                           message="waiting for the first poll")
    text = plain(replace(view(waiting, polling_since=90.0), n_ranks=0, ranks_up=0,
                         waiting_since=80.0))
    assert "◌ waiting for the first answer from Prometheus http://p:9090… 20.0 s" in text
    assert "ranks: no answer yet" in text
    assert " up" not in text and "STALE" not in text and "LATE" not in text
    refused = SourceStatus("Prometheus http://p:9090", Health.ERROR, since=95.0,
                           message="connection refused")
    text = plain(replace(view(refused, polling_since=None), ranks_up=0))
    assert "ERROR for 5.0 s: connection refused" in text
    assert "ranks: no data (8 in the rank map)" in text and "0/8 up" not in text


def test_line_2_keeps_its_pointer_to_check_config_within_120_columns() -> None:
    detail = ("ranks from job metric labels, DCGM 512/512; job metrics not exported; "
              "`ranktop check-config` suggests megatron_step_time_seconds")
    ok = SourceStatus("prometheus", Health.OK, since=0.0, detail=detail)
    frame = Frame(time=100.0, values={}, job={"step": 120_046.0, "tokens_per_s": 2.83e6,
                                              "loss": 2.152})
    text = plain(JobView("job", ok, frame, 512, 511, now=100.0, paused=False, pause_key="p",
                         step_stuck_since=None, step_seconds=1.48, refresh_seconds=2.0,
                         goodput=Goodput(hour=0.86, covered=60.0)))
    line_2 = text.splitlines()[1]
    assert "→ check-config" in line_2[:120]
    assert "DCGM 512/512" not in text  # the rest of the detail: in the help screen
    assert "loss 2.152" in line_2 and len(line_2) <= 120


def test_without_a_word_of_check_config_line_2_has_no_pointer() -> None:
    ok = SourceStatus("prometheus", Health.OK, since=0.0, detail="ranks from labels")
    assert "check-config" not in plain(view(ok, polling_since=None))


WARN = Style(underline=True)  # "warn", told apart from every other role's style


def data_age_role(age: float, sample_interval: float, refresh: float = 2.0) -> str:
    """Whether the header shows data ``age`` seconds old as a warning ("warn") or not."""
    status = SourceStatus("prometheus", Health.OK, since=0.0, sample_interval=sample_interval)
    frame = Frame(time=100.0 - age, values={}, job={})
    line = header(JobView("job", status, frame, 8, 8, now=100.0, paused=False, pause_key="p",
                          step_stuck_since=None, refresh_seconds=refresh),
                  lambda role: WARN if role == "warn" else Style())
    start = line.plain.index(" data ")
    styles = {span.style for span in line.spans if span.start <= start + 2 < span.end}
    return "warn" if WARN in styles else "not"


def test_old_data_is_a_warning_past_two_sample_intervals_and_a_refresh() -> None:
    # scraped every 15 s, refreshed every 2 s: old past 32 s, not at 30 s as it was
    assert data_age_role(31.0, sample_interval=15.0) == "not"
    assert data_age_role(33.0, sample_interval=15.0) == "warn"
    # scraped every 60 s: data of 2 minutes is what the scrapes allow
    assert data_age_role(110.0, sample_interval=60.0) == "not"
    assert data_age_role(123.0, sample_interval=60.0) == "warn"


def test_old_data_is_not_a_warning_within_the_floor_where_samples_come_every_second() -> None:
    # 2 x 1 s + 2 s would call a 5 s old frame old on every poll that takes a few seconds
    assert data_age_role(5.0, sample_interval=1.0) == "not"
    assert data_age_role(9.0, sample_interval=1.0) == "not"
    assert data_age_role(11.0, sample_interval=1.0) == "warn"
    assert data_age_role(11.0, sample_interval=0.0) == "warn"  # not known: the floor
