"""The jobs list against a real Prometheus and a real VictoriaMetrics scraping the simulated
fleet: the stalled job and the job that lost a rank are above every healthy job, no healthy
job is flagged, and (Prometheus) the same verdicts come from the recording rules of
`ranktop rules --jobs`."""

from __future__ import annotations

import json
import time

import pytest
from ranktop.tui.cli.main import main
from ranktop.tui.core.fleet import Verdict, ranked
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.fleet import fleet_servers, load_fleet
from ranktop.tui.sources.prometheus.fleet import FleetReader, fleet_rules_yaml

from tests.integration.cluster import Prometheus, VictoriaMetrics, wait_for
from tests.serving import serve_in_thread

WINDOW = 10.0  # the progress window: seconds, where the console's is two minutes
HEALTHY = ("eval-sweep-7", "finetune-8b")
STALLED, DEAD = "rlhf-stalled", "pretrain-dead-rank"


@pytest.fixture
def fleet():
    jobs = load_fleet()
    servers = fleet_servers(jobs, "127.0.0.1", 0, start=30.0)
    for server in servers:
        serve_in_thread(server)
    yield [s.server_address[1] for s in servers], [job.name for job in jobs]
    for server in servers:
        server.shutdown()
        server.server_close()


def _listed(reader: FleetReader) -> list:
    """The list once the stall and the lost rank show (the rank dies 10 s in)."""
    rows: list = []

    def shown() -> bool:
        rows[:] = ranked(reader.read().jobs, time.time(), reader.limits)
        verdicts = {row.facts.name: row.verdict for row in rows}
        return verdicts.get(STALLED) is Verdict.STALLED and verdicts.get(DEAD) is Verdict.MISSING

    wait_for(shown, "the stalled job and the dead rank's job")
    return rows


def _served(prometheus: Prometheus, jobs: int) -> None:
    prometheus.wait_for_series("count(count by (training_job) (training_step))", jobs)


def _backend(name: str, folder, ports: list[int]) -> Prometheus:
    """The backend scraping the fleet; VictoriaMetrics showing its newest second too (it
    hides 30 s by default: the stall and the lost rank would show that much later)."""
    if name == "victoria-metrics":
        return VictoriaMetrics(folder, ports, latency_offset="1s")
    return Prometheus(folder, ports)


@pytest.mark.parametrize("backend", ["prometheus", "victoria-metrics"])
def test_the_stalled_and_the_dead_rank_jobs_lead_the_list(fleet, tmp_path, capsys, backend):
    ports, names = fleet
    prometheus = _backend(backend, tmp_path, ports)
    settings = load_settings(overrides={"prometheus": {"url": prometheus.url}}, environ={})
    reader = FleetReader(settings, window=WINDOW)
    try:
        _served(prometheus, len(names))
        rows = _listed(reader)
        listed = [row.facts.name for row in rows]
        assert sorted(listed) == sorted(names)
        healthy = [row for row in rows if row.facts.name in HEALTHY]
        assert all(row.healthy for row in healthy), [(r.facts.name, r.worst) for r in healthy]
        assert max(listed.index(STALLED), listed.index(DEAD)) < min(map(listed.index, HEALTHY))
        dead = rows[listed.index(DEAD)]
        assert (dead.facts.ranks_up, dead.facts.ranks_expected) == (63, 64)
        assert dead.worst == "1 rank missing"
        assert rows[0].facts.name == STALLED and rows[0].worst.startswith("stalled")
        # DCGM's series reach each job through its GPUs' UUIDs
        assert all(row.facts.hottest_c is not None for row in rows)
        assert not reader.recorded
        # every query answered; each job on nodes of its own
        assert reader.read().errors == {} and not any(row.facts.shared for row in rows)

        code = main(["jobs", "--prometheus", prometheus.url, "--json"])
        document = json.loads(capsys.readouterr().out)
        assert code == 1 and document["schema"] == 1 and not document["healthy"]
        by_name = {job["name"]: job for job in document["jobs"]}
        assert by_name[DEAD]["verdict"] == "missing" and by_name[DEAD]["ranks_up"] == 63
        assert all(by_name[name]["healthy"] for name in HEALTHY)
    finally:
        reader.close()
        prometheus.stop()


def test_the_list_reads_the_recording_rules_where_prometheus_has_them(fleet, tmp_path):
    ports, names = fleet
    prometheus = Prometheus(tmp_path, ports)
    prometheus.stop()
    settings = load_settings(overrides={"prometheus": {"url": prometheus.url}}, environ={})
    rules = tmp_path / "ranktop-fleet.yml"
    rules.write_text(fleet_rules_yaml(settings).replace("120s", f"{WINDOW:.0f}s"))
    config = tmp_path / "prometheus.yml"
    config.write_text(config.read_text().replace("rule_files: [", f"rule_files: ['{rules}', "))
    prometheus.start()
    reader = FleetReader(settings, window=WINDOW)
    try:
        _served(prometheus, len(names))
        prometheus.wait_for_series("count(ranktop:fleet:up)", len(names))
        rows = _listed(reader)
        assert reader.recorded
        listed = [row.facts.name for row in rows]
        assert max(listed.index(STALLED), listed.index(DEAD)) < min(map(listed.index, HEALTHY))
        assert all(row.healthy for row in rows if row.facts.name in HEALTHY)
    finally:
        reader.close()
        prometheus.stop()
