"""The torchrun preset on a tree real torchrun agents wrote (``torchrun_real``, see its
README): 2 nodes x 4 ranks, rank 5 killed in attempt 0, every rank restarted in attempt 1.
Each layout a job may give finds every rank's files, and the right rank's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ranktop.tui.core.model import RankMap
from ranktop.tui.logs import torchrun_tree
from ranktop.tui.logs.attempts import attempt_number
from ranktop.tui.logs.rank_logs import RankLogs

REAL = Path(__file__).parent / "torchrun_real" / "logs"
JOB = RankMap.grid(["gpu-node-001", "gpu-node-002"], 4, source="test")


def found(spec: str, rank_map: RankMap = JOB) -> dict[int, list[Path]]:
    logs = RankLogs(spec)
    return {rank: logs.files(rank_map, rank)[0] for rank in range(len(rank_map))}


def written_by(paths: list[Path]) -> int:
    """The global rank whose process wrote these files (its first stdout line says)."""
    stdout = next(path for path in paths if path.name == "stdout.log" and path.stat().st_size)
    first = stdout.read_text().splitlines()[0]  # "rank 5 restart 1 resuming from step 20"
    assert first.startswith("rank ")
    return int(first.split()[1])


def assert_every_rank_its_own(files: dict[int, list[Path]]) -> None:
    for rank, paths in files.items():
        assert paths, f"rank {rank}: no file"
        assert [attempt_number(path) for path in paths] == [1, 1, 0, 0]
        assert [path.name for path in paths[:2]] == ["stderr.log", "stdout.log"]
        assert written_by(paths[:2]) == rank and written_by(paths[2:]) == rank


def tree_named(tmp_path: Path, names: tuple[str, str]) -> Path:
    """The real tree with its node folders renamed."""
    root = tmp_path / "logs"
    for node, name in enumerate(names):
        shutil.copytree(REAL / f"node{node}", root / name)
    return root


@pytest.mark.parametrize("given", [
    "",  # the folder of both nodes' log dirs
    "node0",  # one agent's own --log-dir: node 1 is found beside it
    "node1",
    "node1/myrun_gg0u3z94",  # a run folder in it
    "node0/myrun_cl3mrpnx/attempt_1",  # an attempt folder
])
def test_every_layout_of_the_real_tree_finds_every_rank(given: str) -> None:
    assert_every_rank_its_own(found(f"torchrun:{REAL / given}"))


@pytest.mark.parametrize("names", [
    ("gpu-node-001", "gpu-node-002"),
    ("gpu-node-001.cluster.local", "gpu-node-002.cluster.local"),
    ("0", "1"),
    ("node-0", "node-1"),
    ("node_0", "node_1"),
])
def test_node_folders_named_by_host_or_node_rank(tmp_path: Path, names: tuple[str, str]) -> None:
    root = tree_named(tmp_path, names)
    assert_every_rank_its_own(found(f"torchrun:{root}"))
    assert_every_rank_its_own(found(f"torchrun:{root / names[1]}"))


def test_a_log_dir_named_after_no_node_serves_a_job_of_one_node(tmp_path: Path) -> None:
    own = tmp_path / "torch-logs"
    shutil.copytree(REAL / "node0", own)
    one_node = RankMap.grid(["gpu-node-001"], 4, source="test")
    files = found(f"torchrun:{own}", one_node)
    assert [written_by(paths[:2]) for paths in files.values()] == [0, 1, 2, 3]


def test_a_log_dir_named_after_no_node_is_refused_for_several_and_said(tmp_path: Path) -> None:
    own = tmp_path / "torch-logs"
    shutil.copytree(REAL / "node0", own)
    logs = RankLogs(f"torchrun:{own}")
    paths, note = logs.files(JOB, 1)
    assert paths == []
    assert (f"looked in {own}: torch-logs is a --log-dir whose name names no node "
            "(1 run folder(s) in it") in note


def test_agents_sharing_one_log_dir_are_said_to_be_told_apart(tmp_path: Path) -> None:
    """Each agent makes its own run folder in a --log-dir they share: which is which
    node's is written nowhere."""
    shared = tmp_path / "logs"
    for run in REAL.glob("node*/myrun_*"):
        shutil.copytree(run, shared / run.name)
    assert found(f"torchrun:{shared}") == {rank: [] for rank in range(8)}
    note = RankLogs(f"torchrun:{shared}").files(JOB, 5)[1]
    assert "(2 run folder(s) in it, none saying its node): give each node's agent its own" in note


def test_a_missing_node_folder_says_every_folder_it_tried(tmp_path: Path) -> None:
    root = tree_named(tmp_path, ("node0", "elsewhere"))
    paths, note = RankLogs(f"torchrun:{root}").files(JOB, 6)
    assert paths == []
    assert (f"looked in {root} for gpu-node-002, gpu-node-002.*, node1, node-1, node_1, 1: "
            "no 2/stderr.log or stdout.log under */attempt_*/") in note


def test_a_missing_folder_is_said() -> None:
    found_here = torchrun_tree.tree_files("/nonexistent/logs", ["gpu-node-001"], 0, 0)
    assert (found_here.paths, found_here.tried) == ([], ["/nonexistent/logs"])
    assert found_here.why == "no such folder"


def test_only_the_newest_attempts_are_kept(tmp_path: Path) -> None:
    run = tmp_path / "node0" / "job_ab12"
    for attempt in range(torchrun_tree.MAX_ATTEMPTS + 3):
        path = run / f"attempt_{attempt}" / "2" / "stdout.log"
        path.parent.mkdir(parents=True)
        path.write_text("step 1\n")
    paths = found(f"torchrun:{tmp_path / 'node0'}")[2]
    newest = torchrun_tree.MAX_ATTEMPTS + 2
    assert [attempt_number(path) for path in paths] == list(
        range(newest, newest - torchrun_tree.MAX_ATTEMPTS, -1))


def test_a_rank_of_no_known_node_is_not_given_node_1s_files(tmp_path: Path) -> None:
    root = tree_named(tmp_path, ("node-0", "node-1"))
    found_here = torchrun_tree.tree_files(str(root), ["unknown-host"], -1, 1, ["gpu-node-001"])
    assert found_here.paths == []
    assert torchrun_tree.tree_files(str(root), ["unknown-host"], 1, 1).paths


def test_the_note_names_the_newest_attempts_folder_and_the_earlier_attempts() -> None:
    note = RankLogs(f"torchrun:{REAL}").files(JOB, 5)[1]
    assert note == (f"stderr.log, stdout.log in {REAL}/node1/myrun_gg0u3z94/attempt_1/1; "
                    "also attempt_0")
