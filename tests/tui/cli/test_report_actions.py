"""`ranktop report` says what to do: each action with its rule and command, in text and in
``--json``'s "actions", through the demo's engine."""

from __future__ import annotations

import json

from ranktop.tui.cli.report import as_json, as_text
from ranktop.tui.cli.report_actions import actions_lines
from ranktop.tui.core.advice.advise import RESTART, Action
from ranktop.tui.core.advice.restart_cost import JobStop, restart_cost
from ranktop.tui.core.hang.checkpoint import LOG, Checkpoint

from tests.tui.cli.test_report import report_at

# The demo's hardware faults, by the node the scenario put them on.
FAULTY_NODES = {"gpu-node-016", "gpu-node-037", "gpu-node-051", "gpu-node-056"}


def actions_of(at: float, duration: float) -> tuple[str, list[dict]]:
    findings, settings = report_at(at, duration=duration)
    return as_text(findings, settings), json.loads(as_json(findings, settings))["actions"]


def test_an_ecc_error_resets_its_gpu_when_idle_and_the_straggler_is_watched():
    text, actions = actions_of(100.0, 40.0)
    assert "what to do (advice: ranktop runs nothing):" in text
    assert ("  reset GPU 0 on gpu-node-016 when idle (1 uncorrectable ECC error(s), row remap "
            "pending)\n    rule: a remapped row takes effect at the GPU's next reset\n"
            "    $ ssh gpu-node-016 sudo nvidia-smi --gpu-reset -i 0\n") in text
    watch = next(a for a in actions if a["kind"] == "watch")
    assert (watch["rank"], watch["node"], watch["command"]) == (201, "gpu-node-025", None)
    assert watch["evidence"].startswith("straggler 1.45x, ")
    assert watch["evidence"].endswith("; no hardware evidence")
    reset = next(a for a in actions if a["node"] == "gpu-node-016")
    assert (reset["kind"], reset["gpu"], reset["rank"]) == ("reset", 0, 128)
    assert set(reset) == {"kind", "text", "node", "gpu", "rank", "rule", "evidence", "command",
                          "others", "restart"}
    assert reset["others"] is None  # only a drain stops the others on its node
    assert reset["restart"] is None  # a restart's cost, on the restart alone


def test_the_gpu_fallen_off_the_bus_drains_its_node_and_the_job_restarts():
    text, actions = actions_of(170.0, 10.0)
    assert ("  drain gpu-node-056 (XID 79: GPU has fallen off the bus; recovery action: "
            "reset)\n") in text
    drain = next(a for a in actions if a["kind"] == "drain")
    assert (drain["node"], drain["gpu"], drain["rank"]) == ("gpu-node-056", 7, 455)
    # The demo's ranks are a host/GPU grid, no pods, no Slurm node list: both as hints.
    assert drain["command"].splitlines() == [
        "scontrol update NodeName=gpu-node-056 State=DRAIN Reason='ranktop: XID 79: GPU has "
        "fallen off the bus; recovery action: reset'",
        "kubectl cordon gpu-node-056",
        "kubectl drain gpu-node-056 --ignore-daemonsets --delete-emptydir-data"]
    restart = [a for a in actions if a["kind"] == "restart"]
    assert [a["evidence"] for a in restart] == ["stopped by XID 79 on rank 455"]
    # the checkpoint metric: saved at step 120,100, the job stands at 120,118 since 172 s
    cost = restart[0]["restart"]
    assert (cost["checkpoint_step"], cost["checkpoint_source"], cost["steps_lost"]) == (
        120_100, "checkpoint metric", 18)
    assert cost["stopped_seconds"] == 8.0 and cost["idle_gpu_hours"] == 8.0 * 512 / 3600
    assert ("  restart the job (stopped by XID 79 on rank 455): resumes from step 120,100 "
            "(checkpoint metric), losing 18 steps = 2.9 GPU-hours; stopped 8 s: 1.1 GPU-hours "
            "idle so far\n") in text


def test_the_drain_names_the_other_job_on_its_node():
    # the scenario's evaluation job has GPUs 8 and 9 of gpu-node-056, beside rank 455's
    text, actions = actions_of(170.0, 10.0)
    assert ("    also on gpu-node-056: job eval-sweep-7 (GPUs 8, 9): a drain stops it too\n"
            in text)
    drain = next(a for a in actions if a["kind"] == "drain")
    assert drain["others"] == {
        "known": True, "error": None,
        "text": "also on gpu-node-056: job eval-sweep-7 (GPUs 8, 9): a drain stops it too",
        "tenants": [{"user": "job eval-sweep-7", "gpus": [8, 9]}]}


def test_a_contained_ecc_xid_resets_its_gpu_when_idle_and_drains_nothing():
    text, actions = actions_of(240.0, 4.0)
    assert ("  reset GPU 2 on gpu-node-051 when idle (XID 94: contained ECC error; recovery "
            "action: reset)\n    rule: NVIDIA's resolution for XID 94: restart the "
            "application (the job's restart); the GPU itself is cleared by a reset once "
            "idle\n") in text
    assert "gpu-node-051" not in {a["node"] for a in actions if a["kind"] == "drain"}


def test_nvlink_errors_spread_over_the_node_drain_it():
    _, early = actions_of(100.0, 30.0)  # the bad link's GPU alone past the bar
    _, spread = actions_of(100.0, 60.0)  # then its neighbours too
    node = [(a["kind"], a["gpu"]) for a in early if a["node"] == "gpu-node-037"]
    assert node == [("reset", 4)]
    drain = next(a for a in spread if a["node"] == "gpu-node-037")
    assert drain["kind"] == "drain" and "NVSwitch" in drain["rule"]
    assert " GPUs of the node in the last 10 min" in drain["evidence"]


def test_software_faults_get_no_hardware_action_and_hardware_ones_name_their_node():
    for at, duration in ((232.0, 24.0), (262.0, 20.0)):  # the data-loader stall, the loss
        _, actions = actions_of(at, duration)
        hardware = {a["node"] for a in actions if a["kind"] in ("drain", "reset")}
        assert hardware <= FAULTY_NODES, (at, hardware)
        nothing = [a["text"] for a in actions if a["kind"] == "nothing"]
        assert any(("job stall" if at < 260 else "loss") in line for line in nothing), nothing


def test_a_healthy_moment_has_no_actions():
    text, actions = actions_of(2.0, 0.0)
    assert actions == [] and "what to do" not in text


def test_a_checkpoint_read_from_the_logs_is_shown_with_its_line():
    line = "successfully saved checkpoint from iteration   12200 to /ckpt/iter_0012200"
    cost = restart_cost(JobStop(1130.0, 12_387.0, 1000.0, 1.15, 512),
                        Checkpoint(12_200, LOG, line, 0))
    restart = Action(RESTART, "the job has stopped: it resumes only from a restart",
                     "stopped by hang on rank 7", cost=cost)
    assert actions_lines([restart])[2:] == [
        "  restart the job (stopped by hang on rank 7): resumes from step 12,200 (log), losing "
        "187 steps = 30.6 GPU-hours; stopped 2 min: 18.5 GPU-hours idle so far",
        "    rule: the job has stopped: it resumes only from a restart",
        f"    checkpoint read from rank 0's log: {line}"]
