"""`ranktop report` run after the job's series ended (paged after the job died): it says
when they ended and gives their last moment's verdicts, replayed as ``--at`` replays one,
instead of "cannot judge"."""

from __future__ import annotations

import json

from ranktop.tui.cli.report import as_json, as_text, collect, collect_at, exit_code
from ranktop.tui.core.findings import cannot_judge
from ranktop.tui.core.moment import shown, shown_full
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock
from tests.tui.ended_job import EndedJob

END = START + 181.0  # the demo's rank 455 died at ~172 s: its hang is on record by then
PAGED = END + 300.0


def ended_engine(end: float) -> ThreadEngine:
    clock = FakeClock(PAGED)
    source = EndedJob(demo_source(DemoSettings(64, 8, 7), clock, started=START), end)
    return ThreadEngine(load_settings(environ={}), source)


def test_the_report_gives_the_last_moment_and_says_when_the_series_ended():
    settings = load_settings(environ={})
    findings = collect(settings, ended_engine(END), 0.0)
    assert findings.ended is not None and findings.ended.at == END
    assert findings.at == START + 180  # the refresh grid's moment before the end
    assert not cannot_judge(findings) and findings.analysis.ranks_up > 0
    at_then = collect_at(settings, ended_engine(None), START + 180)  # a job never gone
    assert {(a.kind, a.rank) for a in findings.active} == {
        (a.kind, a.rank) for a in at_then.active} != set()
    assert exit_code(findings) == 1
    text = as_text(findings, settings)
    assert f"the job's series ended at {shown(END)}, 5 min ago" in text
    assert "--at" in text and "cannot judge" not in text
    document = json.loads(as_json(findings, settings))
    assert document["ended"]["at"] == shown_full(END) and document["ended"]["time"] == END
    assert document["ended"]["seconds_ago"] == 300.0 and document["live"] is False
    assert document["cannot_judge"] is None and document["healthy"] is False


def test_a_job_whose_last_moment_is_not_held_is_said_gone_all_the_same():
    settings = load_settings(environ={})
    findings = collect(settings, ended_engine(START - 50.0), 0.0)  # before the scenario
    assert findings.ended is not None and findings.at is None
    text = as_text(findings, settings)
    assert "5 min ago" not in text and "the job's series ended at" in text
    assert "the backend holds no frame of the job's last moments" in text
    assert exit_code(findings) == 1
