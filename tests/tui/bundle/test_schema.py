"""`ranktop report --json` and a bundle's analysis.json follow one documented schema
(docs/analysis-schema.json): checked on the demo's hang, the moment with the most in it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jsonschema
import pytest
from ranktop.tui.bundle.make import Screen, make_bundle
from ranktop.tui.cli.report import as_json, collect
from ranktop.tui.core.document import SCHEMA_VERSION
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock

SCHEMA = json.loads((Path(__file__).parents[3] / "docs" / "analysis-schema.json").read_text())


@pytest.fixture(scope="module")
def hung(tmp_path_factory):
    """The demo's engine polled up to its hang (rank 455 died at 172 s)."""
    clock = FakeClock(START + 170.0)
    source = demo_source(DemoSettings(64, 8, seed=7), clock, started=START,
                         log_root=tmp_path_factory.mktemp("logs"))
    engine = ThreadEngine(load_settings(), source, clock=clock)

    def sleep(seconds: float) -> None:
        clock.now += seconds

    findings = collect(load_settings(), engine, 24.0, clock=clock, sleep=sleep)
    yield engine, findings
    engine.close()


def test_the_report_json_follows_the_schema(hung):
    _, findings = hung
    document = json.loads(as_json(findings, load_settings()))
    assert document["schema"] == SCHEMA["properties"]["schema"]["const"] == SCHEMA_VERSION
    assert document["hang"] is not None  # the richest moment: a hang, with evidence
    jsonschema.validate(document, SCHEMA)


def test_a_bundles_analysis_follows_the_same_schema(hung, tmp_path):
    engine, findings = hung
    path = asyncio.run(make_bundle(engine, load_settings(), engine.latest, 455, Screen(),
                                   tmp_path, findings))
    document = json.loads((path / "analysis.json").read_text())
    assert document["rank_values"] and document["log_excerpts"] and document["down"]
    jsonschema.validate(document, SCHEMA)


def test_the_schema_refuses_a_document_that_strays_from_it(hung):
    _, findings = hung
    document = json.loads(as_json(findings, load_settings()))
    for broken in ({**document, "undocumented": 1},
                   {k: v for k, v in document.items() if k != "hang"},
                   {**document, "anomalies": [{**document["anomalies"][0], "state": "maybe"}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, SCHEMA)
