"""`ranktop report` says what to do: each action with its rule and command, in text and in
``--json``'s "actions", through the demo's engine."""

from __future__ import annotations

import json

from ranktop.tui.cli.report import as_json, as_text

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
    assert set(reset) == {"kind", "text", "node", "gpu", "rank", "rule", "evidence", "command"}


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
    assert [a["evidence"] for a in restart] == ["stopped by xid on rank 455"]


def test_a_contained_ecc_xid_resets_its_gpu_when_idle_and_drains_nothing():
    text, actions = actions_of(240.0, 4.0)
    assert ("  reset GPU 2 on gpu-node-051 when idle (XID 94: contained ECC error; recovery "
            "action: reset)\n    rule: NVIDIA's resolution for XID 94: restart the "
            "application\n") in text
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
