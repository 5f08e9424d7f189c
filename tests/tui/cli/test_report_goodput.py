"""`ranktop report` says the job's goodput: in text, a line with the last hour, since it
started, since the job began and the time lost by cause; in JSON, a "goodput" object."""

from __future__ import annotations

import json
import math

import pytest
from ranktop.tui.cli.report import as_json, as_text, collect_at
from ranktop.tui.cli.report_goodput import goodput_line
from ranktop.tui.core.detect.goodput import Goodput

from tests.tui.cli.test_report import report_at
from tests.tui.cli.test_report_at import demo_engine
from tests.tui.conftest import START


def test_the_text_report_gives_the_hour_since_start_and_the_job_and_the_lost_time():
    findings, settings = report_at(600.0)  # a late start: the ten minutes before, two loops
    line = next(line for line in as_text(findings, settings).splitlines()
                if line.startswith("goodput: "))
    assert line.startswith("goodput: 62 % (10 min) of the last hour, 62 % since ranktop "
                           "started (")
    assert "62 % since the job began (healthy step 1.12 s)" in line
    assert line.endswith("; lost in the last hour: hang 2 min, stall 50 s, slowdown 1 min")


def test_the_json_report_carries_the_goodput():
    findings, settings = report_at(600.0)
    goodput = json.loads(as_json(findings, settings))["goodput"]
    assert goodput["hour"] == pytest.approx(0.625, abs=0.02)
    assert goodput["covered_seconds"] == pytest.approx(600, abs=25)
    assert goodput["whole_hour"] is False
    assert goodput["job_began"] == pytest.approx(1_800_000_000.0, abs=20)
    assert set(goodput["lost_seconds"]) >= {"hang", "stall", "slowdown"}
    assert goodput["baseline_step_seconds"] == pytest.approx(1.12, rel=0.01)


def test_unknown_goodput_is_said_in_words_and_null_in_json():
    assert goodput_line(Goodput()).startswith("goodput: unknown (")
    findings, settings = report_at(600.0)
    cleared = type(findings)(findings.job, type(findings.analysis)(
        findings.analysis.status, findings.analysis.rank_map, findings.analysis.frame))
    document = json.loads(as_json(cleared, settings))
    assert document["goodput"]["hour"] is None
    assert math.isnan(cleared.analysis.goodput.hour)


def test_a_past_moment_says_its_share_over_the_minutes_replayed_not_since_a_start():
    settings, engine = demo_engine(START + 900)
    past = collect_at(settings, engine, START + 600)
    line = next(line for line in as_text(past, settings).splitlines()
                if line.startswith("goodput: "))
    assert "% over the minutes replayed (" in line and "since ranktop started" not in line
