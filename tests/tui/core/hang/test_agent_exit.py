"""torchrun's agents' word on their workers' exits, on lines a real agent wrote (PyTorch
2.14.1, the rig's death: ``kill -9`` of rank 2, local rank 2 of node-a)."""

from __future__ import annotations

from ranktop.tui.core.hang.agent_exit import agent_exits
from ranktop.tui.core.model import RankMap

JOB = RankMap.grid(["node-a", "node-b"], 4, source="test")
API = "torch/distributed/elastic/multiprocessing/api.py"
NODE_A = [
    "[default2]:2026-11-28 15:13:33,101 INFO [rank2] step 123 loss 0.094",
    f"W1128 15:13:33.680000 15776 {API}:1028] Sending process 15862 closing signal SIGTERM",
    f"E1128 15:13:33.873000 15776 {API}:1002] failed (exitcode: -9) local_rank: 2 (pid: 15864)"
    " of binary: /usr/bin/python3",
]
TIMED_OUT = (f"E1128 15:11:41.716000 10777 {API}:1002] failed (exitcode: 1) local_rank: 1"
             " (pid: 10877) of binary: /usr/bin/python3")


def test_the_killed_worker_is_its_node_s_rank_by_local_rank_with_its_signal() -> None:
    exits = agent_exits({"node-a": NODE_A}, JOB)
    assert list(exits) == [2]  # SIGTERMed workers end without a "failed" line
    killed = exits[2]
    assert (killed.exitcode, killed.pid, killed.clock) == (-9, 15864, "15:13:33")
    assert killed.cause == "its agent saw it exit -9 (SIGKILL) at 15:13:33"
    assert killed.line == NODE_A[2]


def test_a_console_is_named_by_host_short_host_or_node_rank() -> None:
    assert list(agent_exits({"node-b": [TIMED_OUT]}, JOB)) == [5]
    assert list(agent_exits({"node1": [TIMED_OUT]}, JOB)) == [5]
    fqdn = RankMap.grid(["node-a.cluster", "node-b.cluster"], 4, source="test")
    assert list(agent_exits({"node-b": [TIMED_OUT]}, fqdn)) == [5]
    assert agent_exits({"node-c": [TIMED_OUT]}, JOB) == {}  # no node of the job


def test_the_first_to_exit_orders_first_and_an_exit_code_is_said_without_a_signal() -> None:
    exits = agent_exits({"node-a": NODE_A, "node-b": [TIMED_OUT]}, JOB)
    assert exits[5].seconds < exits[2].seconds  # 15:11:41.716 before 15:13:33.873
    assert exits[5].cause == "its agent saw it exit 1 at 15:11:41"


def test_lines_that_are_not_the_agent_s_or_name_no_worker_of_the_node_are_passed_over() -> None:
    odd = [f"E1128 15:13:33.873000 1 {API}:1002] failed (exitcode: -9) local_rank: 9 (pid: 1)",
           "[default0]:failed (exitcode: banana) local_rank: x", "", "\x1b[31mfailed (exitcode"]
    assert agent_exits({"node-a": odd}, JOB) == {}
