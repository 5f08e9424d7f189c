"""Anomalies become start and resolve events in the event log."""

from __future__ import annotations

from dataclasses import replace

from ranktop.tui.core.detect.detectors import Anomaly
from ranktop.tui.core.events import EventLog
from ranktop.tui.core.journal import Journal
from ranktop.tui.core.model import RankMap

RANK_MAP = RankMap.grid(["h0", "h1"], 4, "test")


def test_starts_and_resolves_are_logged_once_each(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    journal = Journal("job-a", log)
    hot = Anomaly("thermal", "major", 5, "GPU 88 °C", since=100.0)
    stall = Anomaly("job_stall", "critical", None, "SM activity below 60 %", since=104.0)
    assert [e.state for e in journal.update(110.0, [hot], RANK_MAP)] == ["start"]
    assert journal.update(112.0, [hot], RANK_MAP) == []
    events = journal.update(114.0, [stall], RANK_MAP)
    assert {(e.kind, e.state) for e in events} == {("job_stall", "start"), ("thermal", "resolve")}
    history = log.read(rank=5)
    assert [(e.state, e.time, e.host, e.gpu) for e in history] == [
        ("start", 100.0, "h1", 1), ("resolve", 114.0, "h1", 1)]
    assert all(e.job == "job-a" for e in log.read())


def test_without_a_log_events_are_still_returned():
    journal = Journal("job-a", None)
    events = journal.update(1.0, [Anomaly("xid", "critical", 2, "XID 79", 1.0)], RANK_MAP)
    assert events[0].host == "h0" and events[0].gpu == 2


def test_a_rank_no_gpu_data_named_is_logged_without_a_gpu():
    cpu_job = replace(RANK_MAP, ranks=tuple(replace(r, gpu_named=False) for r in RANK_MAP.ranks))
    straggler = Anomaly("straggler", "major", 6, "compute 1.4x", since=1.0)
    (event,) = Journal("job-a", None).update(1.0, [straggler], cpu_job)
    assert (event.rank, event.host, event.gpu) == (6, "h1", None)


def test_pending_anomalies_are_not_facts_yet():
    journal = Journal("job-a", None)
    pending = Anomaly("straggler", "major", 3, "compute 1.4x", since=0.0, held=4.0,
                      confirm_after=30.0)
    assert journal.update(4.0, [pending], RANK_MAP) == []
    confirmed = Anomaly("straggler", "major", 3, "compute 1.4x", since=0.0, held=30.0,
                        confirm_after=30.0)
    assert [(e.state, e.time) for e in journal.update(30.0, [confirmed], RANK_MAP)] == [
        ("start", 0.0)]


def test_a_hang_verdict_that_changes_its_culprit_is_a_correction_not_a_second_fact(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    journal = Journal("job-a", log)
    journal.update(10.0, [Anomaly("hang", "critical", 3, "rank 3 logged nothing", 10.0)],
                   RANK_MAP)
    events = journal.update(20.0, [Anomaly("hang", "critical", 6, "rank 6 is dead", 10.0)],
                            RANK_MAP)
    assert sorted((e.state, e.rank) for e in events) == [("correct", 6), ("retract", 3)]
    correction = next(e for e in events if e.state == "correct")
    assert correction.summary == "corrects the earlier verdict (rank 3): rank 6 is dead"
    assert not any(e.state == "start" and e.rank == 6 for e in log.read())


def test_a_flood_of_ranks_at_once_is_one_event_not_one_a_rank(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    journal = Journal("job-a", log)
    flood = [Anomaly("missing", "critical", r, "no data", since=1.0) for r in range(100_006)]
    hot = Anomaly("thermal", "major", 5, "GPU 88 °C", since=1.0)
    events = journal.update(2.0, [*flood, hot], RANK_MAP)
    assert [(e.kind, e.rank) for e in events] == [("missing", None), ("thermal", 5)]
    assert events[0].summary.startswith("100006 ranks at once (ranks 0, 1, 2, 3, 4, 5, 6, 7 "
                                        "and 99998 more); the first: no data")
    assert (tmp_path / "events.jsonl").stat().st_size < 2_000
    resolved = journal.update(3.0, [hot], RANK_MAP)
    assert [(e.state, e.rank) for e in resolved] == [("resolve", None)]
    assert len(journal.active) == 1  # each rank's anomaly is still tracked on its own
