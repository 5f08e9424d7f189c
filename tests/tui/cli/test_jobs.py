"""`ranktop jobs`: the list as a table or as JSON that follows docs/jobs-schema.json, and the
exit code a script routes on."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
from ranktop.tui.cli.jobs import list_jobs
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.fleet import FleetReader

from tests.tui.sources.prometheus.test_fleet import FakeFleet

SCHEMA = json.loads((Path(__file__).parents[3] / "docs" / "jobs-schema.json").read_text())


def _run(jobs: int, as_json: bool, hostile: str = "") -> tuple[int, str]:
    settings = load_settings(overrides={"prometheus": {"url": "http://prometheus:9090"}},
                             environ={})
    backend = FakeFleet(jobs)
    if hostile:
        backend.names[0] = hostile
    out, err = io.StringIO(), io.StringIO()
    code = list_jobs(settings, out, err, as_json, FleetReader(settings, client=backend))
    return code, out.getvalue()


def test_the_json_follows_the_schema_and_the_exit_code_says_unhealthy():
    code, text = _run(5, as_json=True)
    document = json.loads(text)
    jsonschema.validate(document, SCHEMA)
    assert code == 1 and document["unhealthy"] == 3 and not document["healthy"]
    assert [job["verdict"] for job in document["jobs"]][:3] == ["stalled", "missing",
                                                               "critical"]
    assert [job["name"] for job in document["jobs"]][:3] == ["job-0002", "job-0003",
                                                            "job-0001"]


def test_a_healthy_fleet_exits_0():
    code, text = _run(1, as_json=True)
    assert code == 0 and json.loads(text)["healthy"]


def test_the_table_has_a_row_per_job_worst_first():
    code, text = _run(4, as_json=False)
    assert code == 1
    lines = text.splitlines()
    assert lines[0].startswith("4 jobs, 3 unhealthy · Prometheus http://prometheus:9090")
    assert lines[1].split() == ["JOB", "RANKS", "PROGRESS", "WORST", "ALERTS", "GOODPUT",
                                "OWNER", "SHARES"]
    assert lines[2].startswith("job-0002") and "stalled" in lines[2]
    assert lines[3].startswith("job-0003") and "7/8" in lines[3] and "1 rank missing" in lines[3]
    assert lines[-1].startswith("job-0000") and "30 steps" in lines[-1]


def test_a_job_name_from_a_label_is_shown_plain():
    _, text = _run(2, as_json=False, hostile="evil\x1b[31m\njob")
    assert "\x1b" not in text and "evil\ufffd[31m\ufffdjob" in text


def test_rules_for_the_list_are_printed_by_rules_jobs(capsys):
    from ranktop.tui.cli.main import main

    assert main(["rules", "--jobs"]) == 0
    text = capsys.readouterr().out
    assert '- name: "ranktop-fleet"' in text
    assert "record: ranktop:fleet:steps" in text and "by_rank" not in text
