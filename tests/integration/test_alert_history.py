"""A rank's alert history read from the ALERTS series of a real Prometheus.

ranktop's shipped rules wait a minute or two before firing, too long for a test, so one test
runs a Prometheus of its own with a rule that fires at once: a GPU above 84 °C. It scrapes
the session's simulated job with the hot GPU (rank 37, at 88 °C from the start). The other
test reads the session Prometheus, whose shipped temperature rule has rank 37 pending. A
VictoriaMetrics without vmalert has no ALERTS: its rank's alert table says so.
"""

from __future__ import annotations

import subprocess
import time
import urllib.request

import pytest
from ranktop.tui.engine.rank_data import RankData
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.scenario import load_scenario
from ranktop.tui.sources.alerts import prometheus_history

from tests.integration.cluster import HERE, free_port, instant, require, wait_for

HOT_RULE = """\
groups:
  - name: alert-history-test
    rules:
      - alert: HotGPU
        expr: DCGM_FI_DEV_GPU_TEMP > 84
        for: 0s
        labels: {severity: warning}
"""


def ranks():
    """Ranks 37 (hot) and 36 (its neighbour on gpu-node-004) of the faults job."""
    cluster = SimCluster(64, 8, 7, load_scenario(HERE / "scenario-faults.toml"))
    return cluster.rank_map.ranks[37], cluster.rank_map.ranks[36]


def settings_for(url: str):
    return load_settings(overrides={"prometheus": {"url": url}}, environ={})


@pytest.fixture
def hot_prometheus(simulators, tmp_path):
    """A Prometheus with only the HotGPU rule, scraping the faults job every second."""
    binary, port = require("prometheus"), free_port()
    (tmp_path / "hot.yml").write_text(HOT_RULE)
    (tmp_path / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: ['{tmp_path / 'hot.yml'}']\n"
        "scrape_configs:\n"
        "  - job_name: ranktop-simulate\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{simulators[0].port}']}}]\n"
    )
    process = subprocess.Popen(
        [binary, f"--config.file={tmp_path / 'prometheus.yml'}",
         f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: urllib.request.urlopen(f"{url}/-/ready", timeout=2).status == 200,
                 f"Prometheus on port {port}")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_a_firing_alert_shows_in_the_hot_ranks_history_only(hot_prometheus):
    hot, neighbour = ranks()
    firing = 'count_over_time(ALERTS{alertname="HotGPU",alertstate="firing"}[1m]) >= 3'
    wait_for(lambda: instant(hot_prometheus, firing), "HotGPU firing for 3 evaluations")
    now = time.time()
    records = prometheus_history(settings_for(hot_prometheus), hot, 300, now, step=1)
    assert [(r.name, r.state, r.source, r.end) for r in records] == [
        ("HotGPU", "firing", "prometheus", None)]
    assert now - 300 <= records[0].time <= now
    assert prometheus_history(settings_for(hot_prometheus), neighbour, 300, now, step=1) == []


def test_the_shipped_temperature_rule_is_in_the_hot_ranks_history(prometheus):
    hot, neighbour = ranks()
    seen = f'count_over_time(ALERTS{{alertname="GPUTemperatureHigh",UUID="{hot.uuid}"}}[1m])'
    wait_for(lambda: instant(prometheus.url, f"{seen} >= 3"), "GPUTemperatureHigh in ALERTS")
    now = time.time()
    records = prometheus_history(settings_for(prometheus.url), hot, 600, now, step=1)
    temperature = [r for r in records if r.name == "GPUTemperatureHigh"]
    assert temperature and all(r.state in ("pending", "firing") for r in temperature)
    assert any(r.end is None for r in temperature)  # the GPU is still hot
    later = prometheus_history(settings_for(prometheus.url), neighbour, 600, now, step=1)
    assert not [r for r in later if r.name == "GPUTemperatureHigh"]


def test_victoria_metrics_without_vmalert_says_why_its_alert_table_is_empty(victoria):
    hot, _ = ranks()
    context = RankData(settings_for(victoria.url), "integration-faults", event_log=None)
    rows, note = context.alert_rows(hot)
    assert rows == []
    assert "Prometheus: no ALERTS series: VictoriaMetrics keeps ALERTS only where vmalert " \
           "writes them" in note
    assert "unreachable" not in note
