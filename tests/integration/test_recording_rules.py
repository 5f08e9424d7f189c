"""`ranktop rules` against a real Prometheus: it loads the rules, records every rank's GPU
metrics by rank, and the source reads the recorded series from then on."""

from __future__ import annotations

import math

import pytest
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.rules import rules_yaml
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.integration.cluster import Prometheus
from tests.integration.conftest import JOB_FAULTS


@pytest.fixture
def recording(simulators, tmp_path):
    """A Prometheus of its own with ranktop's rules for the faults job beside its alerts."""
    server = Prometheus(tmp_path, [s.port for s in simulators])
    server.stop()
    rules = tmp_path / "ranktop-rules.yml"
    settings = load_settings(overrides={"prometheus": {"job": JOB_FAULTS}}, environ={})
    rules.write_text(rules_yaml(settings))
    config = tmp_path / "prometheus.yml"
    config.write_text(config.read_text().replace("rule_files: [", f"rule_files: ['{rules}', "))
    server.start()
    try:
        server.wait_for_series(f'count(ranktop:power:by_rank{{training_job="{JOB_FAULTS}"}})',
                               512)
        yield server
    finally:
        server.stop()


def test_the_source_reads_every_ranks_recorded_series(recording):
    settings = load_settings(overrides={"prometheus": {"url": recording.url, "job": JOB_FAULTS}},
                             environ={})
    source = PrometheusSource(settings)
    source.poll_now()  # learns the ranks, and that Prometheus records by rank
    assert "ranktop:power:by_rank" in source.queries()["metric:power"]
    assert "DCGM_FI_DEV_GPU_TEMP" in source.queries()["metric:temperature"]  # the map's own
    frame = source.poll_now()
    assert len(frame.values["power"]) == 512
    assert not any(math.isnan(v) for v in frame.values["power"])
    assert frame.shows.get("sm_active") == "SM active"  # a metric of several ways keeps its way
