"""A restart's cost, the whole path: the demo scenario's hang (rank 455's GPU falls off the
bus at 170 s, the rank dies at 172 s) served by `ranktop simulate`'s exporter -> a real
Prometheus -> `ranktop report --json`'s restart action, resuming from the checkpoint metric,
or, where none is exported, from rank 0's saved-checkpoint line in the simulated logs."""

from __future__ import annotations

import json

import pytest
from ranktop.tui.cli.main import main
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.log_writer import LogWriter
from ranktop.tui.simulator.scenario import default_scenario_path, load_scenario

from tests.integration.cluster import Prometheus, SkippingSimulator, held_then_one_gone

JOB = "llama-70b-pretrain"
SEED, NODES = 31, 64  # the demo's 512 ranks
RANKS = NODES * 8
START = 150.0  # polls see rank 455 alive, then the stretch to the hang is skipped
IN_THE_HANG = 178.0
CHECKPOINT = 120_100  # saved every 100 steps; the job stands at ~120,118 in the hang
GPU_HOURS_PER_SECOND = RANKS / 3600


@pytest.fixture(scope="module")
def hung(tmp_path_factory):
    """Prometheus holding the job alive, then hung with rank 455 dead; the ranks' logs."""
    folder = tmp_path_factory.mktemp("restart")
    simulator = SkippingSimulator(default_scenario_path(), seed=SEED, nodes=NODES, start=START)
    server = Prometheus(folder, [simulator.port])
    try:
        held_then_one_gone(server, simulator, JOB, RANKS, IN_THE_HANG)
        writer = LogWriter(SimCluster(NODES, seed=SEED, scenario=load_scenario()),
                           folder / "logs", seed=SEED)
        writer.advance(simulator.now())
        yield server, writer
    finally:
        server.stop()
        simulator.stop()


def restart(args: list[str], capsys) -> tuple[dict, dict]:
    main(["report", *args, "--json"])
    document = json.loads(capsys.readouterr().out)
    (found,) = [a for a in document["actions"] if a["kind"] == "restart"]
    return found, document


def test_the_restart_resumes_from_the_checkpoint_metric_and_says_its_cost(hung, capsys):
    server, _ = hung
    found, document = restart(["--prometheus", server.url, "--job", JOB], capsys)
    cost = found["restart"]
    step = document["job_values"]["step"]
    assert document["job_values"]["checkpoint_step"] == CHECKPOINT
    assert (cost["checkpoint_step"], cost["checkpoint_source"]) == (CHECKPOINT,
                                                                   "checkpoint metric")
    assert cost["steps_lost"] == step - CHECKPOINT > 0
    assert cost["gpu_hours_lost"] == pytest.approx(cost["steps_lost"] * 1.12 * RANKS / 3600,
                                                   rel=0.5)  # a step of 1.1 to 1.6 s
    # since rank 455 went missing, as far as a report's one poll knows: within the look-back's
    # 10 s step of the death, from the poll itself
    assert cost["stopped_seconds"] >= 0
    assert cost["idle_gpu_hours"] == pytest.approx(cost["stopped_seconds"]
                                                   * GPU_HOURS_PER_SECOND)
    assert found["text"].startswith("restart the job (stopped by ")
    assert (f"on rank 455): resumes from step {CHECKPOINT:,} (checkpoint metric), losing "
            f"{cost['steps_lost']} steps = ") in found["text"]
    assert "GPU-hours idle so far" in found["text"]


def test_without_the_metric_the_restart_resumes_from_rank_0s_log_line(hung, capsys, tmp_path):
    server, writer = hung
    config = tmp_path / "config.toml"
    config.write_text('[job_metrics]\ncheckpoint_step = "max(no_such_metric{job})"\n')
    found, document = restart(["--config", str(config), "--prometheus", server.url, "--job",
                               JOB, "--logs", writer.layout_spec], capsys)
    assert document["job_values"]["checkpoint_step"] is None
    cost = found["restart"]
    assert (cost["checkpoint_step"], cost["checkpoint_source"]) == (CHECKPOINT, "log")
    assert cost["checkpoint_line"].endswith(
        f"successfully saved checkpoint from iteration  {CHECKPOINT} to "
        f"/checkpoints/iter_0{CHECKPOINT}")
    assert f"resumes from step {CHECKPOINT:,} (log)" in found["text"]
