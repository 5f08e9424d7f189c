"""Anomalies become start and resolve events in the event log."""

from __future__ import annotations

from ranktop.tui.core.detect import Anomaly
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
