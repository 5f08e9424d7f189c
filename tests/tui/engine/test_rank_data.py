"""The rank screen's reads say every way they come up short, the event log's troubles
included."""

from __future__ import annotations

from pathlib import Path

from ranktop.tui.core.events import EventLog
from ranktop.tui.core.model import Rank
from ranktop.tui.engine.rank_data import RankData
from ranktop.tui.settings.config import load_settings

RANK = Rank(rank=3, host="gpu-node-000", gpu=3, node=0)


def context(event_log: EventLog) -> RankData:
    return RankData(load_settings(environ={}), "job", event_log)


def test_a_broken_event_log_is_named_in_the_alerts_note(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\x00\xff not an event\n")
    rows, note = context(EventLog(path)).alert_rows(RANK)
    assert rows == []
    assert "event log: events.jsonl line 1" in note


def test_a_sound_event_log_adds_no_note(tmp_path: Path) -> None:
    _, note = context(EventLog(tmp_path / "events.jsonl")).alert_rows(RANK)
    assert "event log" not in note
