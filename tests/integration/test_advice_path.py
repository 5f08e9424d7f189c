"""What to do, the whole path: simulator -> real Prometheus -> analysis -> `ranktop report
--json`'s "actions". The GPU's recovery action and XID travel as dcgm-exporter exports them;
the command follows what ranktop learns of the cluster (pods: Kubernetes; else both)."""

from __future__ import annotations

import json

import pytest
from ranktop.tui.cli.main import main

from tests.integration.cluster import HERE, Prometheus, Simulator

BARE_JOB, K8S_JOB = "integration-hardware", "integration-advice-k8s"
RANKS = 16  # two nodes of eight: the XID on rank 12 and the failed remap on rank 14 share
# gpu-node-001; the ECC error on rank 5 is on gpu-node-000


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    scenario = HERE / "scenario-hardware.toml"
    on_kubernetes = ("--profile", "k8s", "--job", K8S_JOB)
    simulators = [Simulator(scenario, seed=21, nodes=2),
                  Simulator(scenario, seed=22, nodes=2, extra=on_kubernetes)]
    server = Prometheus(tmp_path_factory.mktemp("advice"), [s.port for s in simulators])
    try:
        for job in (BARE_JOB, K8S_JOB):
            server.wait_for_series(f'count(training_step_seconds{{training_job="{job}"}})',
                                   RANKS)
        yield server
    finally:
        server.stop()
        for simulator in simulators:
            simulator.stop()


def actions(prometheus: Prometheus, job: str, capsys) -> dict[str, dict]:
    main(["report", "--prometheus", prometheus.url, "--job", job, "--json"])
    document = json.loads(capsys.readouterr().out)
    return {f"{a['kind']} {a['node']}": a for a in document["actions"]}


def test_the_failed_gpus_node_is_drained_and_the_ecc_gpu_reset_when_idle(prometheus, capsys):
    found = actions(prometheus, BARE_JOB, capsys)
    drain = found["drain gpu-node-001"]
    assert drain["text"].startswith("drain gpu-node-001 (XID 79: GPU has fallen off the bus; "
                                    "recovery action: reset")
    assert "row remap failed" in drain["evidence"]  # rank 14's, on the same node
    assert "recovery action: drain and reset" in drain["evidence"]
    assert drain["command"].splitlines()[0].startswith(
        "scontrol update NodeName=gpu-node-001 State=DRAIN Reason='ranktop: XID 79")
    assert "kubectl cordon gpu-node-001" in drain["command"]  # no scheduler known: both
    reset = found["reset gpu-node-000"]
    assert (reset["gpu"], reset["rank"]) == (5, 5)
    assert reset["evidence"] == "1 uncorrectable ECC error(s), row remap pending"
    assert reset["command"] == "ssh gpu-node-000 sudo nvidia-smi --gpu-reset -i 5"


def test_on_kubernetes_the_drain_is_kubectls(prometheus, capsys):
    # the ranks run in pods (stock counters as a ServiceMonitor stores them: no recovery
    # action exported, the XID's resolution decides)
    found = actions(prometheus, K8S_JOB, capsys)
    drain = found["drain gpu-node-001"]
    assert drain["evidence"].startswith("XID 79: GPU has fallen off the bus; row remap failed")
    assert "recovery action" not in drain["evidence"]
    assert drain["command"].splitlines() == [
        "kubectl cordon gpu-node-001",
        "kubectl drain gpu-node-001 --ignore-daemonsets --delete-emptydir-data"]
