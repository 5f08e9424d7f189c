"""A rank frozen outside NCCL (alive, its log silent, its GPU idle), the whole path:
`ranktop simulate` writing metrics and logs -> a real Prometheus -> `ranktop report --json`.
The report names the frozen rank as the one culprit, from the logs and the GPU's idleness,
with no Flight Recorder dump, and a job standing still is not healthy."""

from __future__ import annotations

import json

from ranktop.tui.cli.main import main

from tests.integration.cluster import HERE, Prometheus, Simulator

JOB = "integration-frozen"
FROZEN = 311 % 128  # on a 16-node simulated cluster: rank 55


def test_report_names_the_frozen_rank_from_its_silence_and_idle_gpu(tmp_path, capsys) -> None:
    logs = tmp_path / "logs"
    # 30 s into the scenario: frozen since 2 s, every other watchdog has just fired
    simulator = Simulator(HERE / "scenario-frozen.toml", seed=5, nodes=16,
                          extra=("--log-dir", str(logs)))
    server = Prometheus(tmp_path, [simulator.port])
    try:
        server.wait_for_series(f'count(training_step_seconds{{training_job="{JOB}"}})', 128)
        code = main(["report", "--prometheus", server.url, "--job", JOB, "--logs",
                     f"torchrun:{logs}", "--duration", "10", "--refresh", "2", "--json"])
        document = json.loads(capsys.readouterr().out)
    finally:
        server.stop()
        simulator.stop()
    hang = document["hang"]
    assert hang is not None and hang["sure"] and hang["culprits"] == [FROZEN], hang
    assert hang["summary"].startswith(f"rank {FROZEN} is frozen, the others wait for it")
    assert "GPU is idle" in hang["summary"]
    rows = [a for a in document["anomalies"] if a["kind"] == "hang"]
    assert [(a["rank"], a["state"]) for a in rows] == [(FROZEN, "confirmed")]
    assert code == 1 and document["healthy"] is False
