"""One choice of engine: apart where Prometheus is polled, in threads for the demo and NVML
alone, and what RANKTOP_ENGINE forces."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import pytest
from ranktop.tui.engine.start import ENGINE_VARIABLE, runs_apart, start_engine
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock


def settings(url: str = ""):
    loaded = load_settings(environ={})
    return replace(loaded, prometheus=replace(loaded.prometheus, url=url))


@pytest.mark.parametrize(("url", "demo", "forced", "apart"), [
    ("http://prometheus:9090", False, None, True),
    ("", False, None, False),  # NVML alone
    ("http://prometheus:9090", True, None, False),  # the demo, whatever the config says
    ("http://prometheus:9090", False, "thread", False),
    ("", True, "process", True),
    ("http://prometheus:9090", False, "anything else", True),
])
def test_the_engine_runs_apart_where_prometheus_is_polled(url, demo, forced, apart):
    environ = {} if forced is None else {ENGINE_VARIABLE: forced}
    assert runs_apart(settings(url), demo, environ) is apart


def make_demo(settings_, clock):
    return demo_source(DemoSettings(2, 8, seed=7), clock, started=START)


def test_an_engine_in_threads_is_fed_by_the_source_made_and_journals(tmp_path):
    journal = tmp_path / "events.jsonl"
    engine = start_engine(settings(), partial(make_demo, clock=FakeClock(START + 20.0)),
                          journal, demo=True, environ={})
    try:
        assert isinstance(engine, ThreadEngine)
        assert len(engine.latest.analysis.rank_map) == 16
        assert engine.pipeline.event_log.path == journal
    finally:
        engine.close()
