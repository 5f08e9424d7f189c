"""Who else a drain stops, the whole path: `ranktop simulate` with another job on a node ->
real Prometheus -> the engine asking about the drained nodes -> `ranktop report --json`'s
drain. On bare metal the other job is dcgm-exporter's hpc_job; on Kubernetes its pod, as a
Prometheus behind a ServiceMonitor stores it (exported_pod, beside the exporter's own pod).

Each simulator has a Prometheus of its own: both simulate nodes of the same names."""

from __future__ import annotations

import json

import pytest
from ranktop.tui.cli.main import main

from tests.integration.cluster import HERE, Prometheus, Simulator

JOB = "integration-tenants"
RANKS = 16  # two nodes of eight
MODES = {"bare metal": (), "kubernetes": ("--profile", "k8s")}


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    started: dict[str, tuple[Simulator, Prometheus]] = {}
    try:
        for mode, extra in MODES.items():
            simulator = Simulator(HERE / "scenario-tenants.toml", seed=31, nodes=2, extra=extra)
            server = Prometheus(tmp_path_factory.mktemp("tenants"), [simulator.port])
            started[mode] = (simulator, server)
            server.wait_for_series(f'count(training_step_seconds{{training_job="{JOB}"}})',
                                   RANKS)
        yield {mode: server for mode, (_, server) in started.items()}
    finally:
        for simulator, server in started.values():
            server.stop()
            simulator.stop()


def drains(server: Prometheus, capsys) -> dict[str, dict]:
    main(["report", "--prometheus", server.url, "--job", JOB, "--json"])
    document = json.loads(capsys.readouterr().out)
    return {a["node"]: a for a in document["actions"] if a["kind"] == "drain"}


@pytest.mark.parametrize(("mode", "user"), [("bare metal", "job eval-sweep-7"),
                                            ("kubernetes", "research/eval-sweep-7")])
def test_the_drain_names_the_other_job_on_its_node_and_nothing_elsewhere(servers, capsys,
                                                                         mode, user):
    found = drains(servers[mode], capsys)
    assert found["gpu-node-001"]["others"] == {
        "known": True, "error": None,
        "text": f"also on gpu-node-001: {user} (GPUs 8, 9): a drain stops it too",
        "tenants": [{"user": user, "gpus": [8, 9]}]}
    assert found["gpu-node-000"]["others"] == {
        "known": True, "error": None, "tenants": [],
        "text": "also on gpu-node-000: nothing else runs on it"}
