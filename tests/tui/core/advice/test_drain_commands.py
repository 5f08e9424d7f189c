"""The command behind an action: by scheduler, safely quoted, and none for a name that is not
a plain host name."""

from __future__ import annotations

import shlex
from dataclasses import replace

import pytest
from ranktop.tui.core.advice.advise import Seen, advise
from ranktop.tui.core.advice.drain_commands import (
    MAX_REASON_CHARS,
    Scheduler,
    drain_commands,
    reason_text,
    reset_commands,
    safe_host,
    scheduler_of,
)
from ranktop.tui.core.advice.incidents import incidents
from ranktop.tui.core.anomaly import Anomaly
from ranktop.tui.core.model import Frame, RankMap
from ranktop.tui.core.ranks import FROM_SLURM

HOSTS = ["gpu-node-000", "gpu-node-001"]


def test_the_scheduler_is_kubernetes_with_pods_slurm_with_its_node_list_else_unknown():
    grid = RankMap.grid(HOSTS, 4, "job metric labels")
    pods = replace(grid, ranks=tuple(replace(r, pod=f"w-{r.node}") for r in grid.ranks))
    assert scheduler_of(pods) is Scheduler.KUBERNETES
    assert scheduler_of(RankMap.grid(HOSTS, 4, FROM_SLURM)) is Scheduler.SLURM
    assert scheduler_of(grid) is Scheduler.UNKNOWN


def test_slurm_drains_with_a_quoted_reason():
    [command] = drain_commands("gpu-node-056", "XID 79: GPU has fallen off the bus",
                               Scheduler.SLURM)
    assert command == ("scontrol update NodeName=gpu-node-056 State=DRAIN "
                       "Reason='ranktop: XID 79: GPU has fallen off the bus'")


def test_kubernetes_cordons_then_drains():
    assert drain_commands("gpu-node-056", "x", Scheduler.KUBERNETES) == (
        "kubectl cordon gpu-node-056",
        "kubectl drain gpu-node-056 --ignore-daemonsets --delete-emptydir-data")


def test_an_unknown_scheduler_gets_both_as_hints():
    commands = drain_commands("n1.example.org", "x", Scheduler.UNKNOWN)
    assert [c.split()[0] for c in commands] == ["scontrol", "kubectl", "kubectl"]


@pytest.mark.parametrize("evidence", [
    "it's $(rm -rf /) `reboot`; echo 'pwned'",
    "bell \x07 and \x1b[31mred\x1b[0m\nnext line",
    "x" * 500,
])
def test_a_reason_from_outside_stays_one_quoted_argument(evidence):
    [command] = drain_commands("gpu-node-001", evidence, Scheduler.SLURM)
    words = shlex.split(command)
    assert words[:4] == ["scontrol", "update", "NodeName=gpu-node-001", "State=DRAIN"]
    assert len(words) == 5 and words[4].startswith("Reason=ranktop: ")
    reason = words[4].removeprefix("Reason=")
    assert reason == reason_text(evidence)
    assert reason.isprintable() and len(reason) <= MAX_REASON_CHARS


@pytest.mark.parametrize("name", ["node;reboot", "node 1", "$(id)", "-rf", "a..b", "",
                                  "node\x1b[2J", "x" * 254])
def test_a_node_name_that_is_not_a_plain_host_name_gets_no_command(name):
    assert not safe_host(name)
    assert drain_commands(name, "x", Scheduler.UNKNOWN) == ()
    assert reset_commands(name, 3) == ()


def test_a_reset_runs_on_the_node_for_one_gpu():
    assert reset_commands("gpu-node-050", 3) == ("ssh gpu-node-050 sudo nvidia-smi "
                                                 "--gpu-reset -i 3",)
    assert reset_commands("gpu-node-050", None) == ()


def test_advice_carries_the_command_of_its_scheduler():
    ranks = RankMap.grid(HOSTS, 4, FROM_SLURM)
    values = {"row_remap_failure": [0.0, 1.0, *[0.0] * 6], "recovery_action": [0.0] * 8}
    seen = Seen(ranks, Frame(10.0, values), {}, {}, None)
    root = Anomaly("remap_failure", "critical", 1, "row remap failure", 0.0, held=10.0)
    [action] = advise(incidents([root], ranks), seen)
    assert action.commands == (
        "scontrol update NodeName=gpu-node-000 State=DRAIN "
        "Reason='ranktop: row remap failed: no spare rows left'",)
