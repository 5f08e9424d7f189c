"""The agents' consoles beside torchrun's node folders (the rig's layout: ``logs/<host>/``
and ``logs/<host>.console``): found from the folder of node folders or from one node's,
their failure lines kept as they stood at a moment, and those of an earlier incident left."""

from __future__ import annotations

import time
from pathlib import Path

from ranktop.tui.logs.agent_console import agent_failures, console_files, failure_lines

API = "torch/distributed/elastic/multiprocessing/api.py"
KILLED = (f"E1128 15:13:33.873000 15776 {API}:1002] failed (exitcode: -9) local_rank: 2"
          " (pid: 15864) of binary: /usr/bin/python3")
EARLIER = KILLED.replace("15:13:33", "15:01:02").replace("local_rank: 2", "local_rank: 0")
CONSOLE = [
    "[default2]:2026-11-28 15:13:33,101 INFO [rank2] step 123 loss 0.094",
    f"W1128 15:13:33.680000 15776 {API}:1028] Sending process 15862 closing signal SIGTERM",
    KILLED,
    "[default2]:2026-11-28 15:13:45,809 INFO [rank2] rank 2 of 8 on node-a",
]


def lay_out(root: Path) -> Path:
    """Two nodes' log dirs and their agents' consoles; the folder of node folders."""
    logs = root / "logs"
    for host in ("node-a", "node-b"):
        (logs / host / "job_x1" / "attempt_0" / "0").mkdir(parents=True)
        (logs / host / "job_x1" / "attempt_0" / "0" / "stderr.log").write_text("step 1\n")
    (logs / "node-a.console").write_text("\n".join([EARLIER, *CONSOLE]) + "\n")
    (logs / "node-b.console").write_text("[default0]:step 1\n")
    return logs


def local(*fields: int) -> float:
    """The POSIX time of a wall-clock time on this machine (as the stamps are)."""
    return time.mktime((*fields, 0, 0, -1))


def test_consoles_are_found_beside_the_node_folders_from_either_level(tmp_path) -> None:
    logs = lay_out(tmp_path)
    assert sorted(console_files(f"torchrun:{logs}")) == ["node-a", "node-b"]
    assert console_files(f"torchrun:{logs / 'node-b'}") == console_files(f"torchrun:{logs}")
    assert console_files(f"{logs}/rank{{rank}}.log") == {}  # not the torchrun preset
    assert console_files(f"torchrun:{tmp_path / 'nowhere'}") == {}


def test_only_the_agents_failure_lines_are_kept_as_they_stood(tmp_path) -> None:
    logs = lay_out(tmp_path)
    spec = f"torchrun:{logs}"
    assert agent_failures(spec, None, None) == {"node-a": [EARLIER, KILLED], "node-b": []}
    before = agent_failures(spec, None, local(2026, 11, 28, 15, 13, 33))
    assert before["node-a"] == [EARLIER]  # the kill was logged .873 s later
    hang = local(2026, 11, 28, 15, 13, 30)  # the stall began: the 15:01 exit is older
    assert failure_lines(console_files(spec), hang, None)["node-a"] == [KILLED]


def test_a_line_from_outside_is_made_plain_before_it_is_kept(tmp_path) -> None:
    logs = lay_out(tmp_path)
    (logs / "node-b.console").write_bytes(KILLED.encode() + b"\x1b[2J\xff\n")
    kept = agent_failures(f"torchrun:{logs}", None, None)["node-b"]
    assert kept == [KILLED + "\ufffd[2J\ufffd"]
