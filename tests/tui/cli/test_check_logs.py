"""`ranktop check-config --logs SPEC` tests the spec against the job's rank map: how many
ranks found a file, one example path, the first rank that found none and why."""

from __future__ import annotations

import shutil
from io import StringIO
from pathlib import Path

import pytest
from ranktop.tui.cli.check_logs import check_logs
from ranktop.tui.cli.main import main
from ranktop.tui.core.model import RankMap

GRID = RankMap.grid(["gpu-node-000", "gpu-node-001"], 4, source="test")


@pytest.fixture(autouse=True)
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def rank_files(root: Path, ranks: range) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rank in ranks:
        (root / f"rank{rank}.log").write_text(f"[rank{rank}]: step 1\n")


def test_every_rank_found_a_file(tmp_path: Path) -> None:
    rank_files(tmp_path, range(8))
    out = StringIO()
    assert check_logs(f"{tmp_path}/rank{{rank}}.log", GRID, out) is True
    text = out.getvalue()
    assert "a file for     8 of 8 ranks" in text
    assert f"e.g.           rank 0: {tmp_path}/rank0.log" in text
    assert "none for" not in text


def test_the_first_rank_without_a_file_is_named_with_why(tmp_path: Path) -> None:
    rank_files(tmp_path, range(5))
    out = StringIO()
    assert check_logs(f"{tmp_path}/rank{{rank}}.log", GRID, out) is False
    text = out.getvalue()
    assert "a file for     5 of 8 ranks" in text
    assert ("none for       3 ranks; the first: rank 5 (gpu-node-001 GPU 1): no file found for"
            f" rank 5 (gpu-node-001) with {tmp_path}/rank{{rank}}.log") in text


def test_no_log_configured_is_said_and_is_no_failure() -> None:
    out = StringIO()
    assert check_logs("", GRID, out) is True
    assert "no log configured (--logs PATTERN)" in out.getvalue()


def test_without_prometheus_the_rank_map_file_is_the_map(tmp_path: Path, capsys) -> None:
    rank_files(tmp_path / "logs", range(2))
    rank_map = tmp_path / "ranks.csv"
    rank_map.write_text("rank,host,gpu\n0,gpu-node-000,0\n1,gpu-node-000,1\n2,gpu-node-001,0\n")
    code = main(["check-config", "--logs", f"{tmp_path}/logs/rank{{rank}}.log",
                 "--rank-map", str(rank_map)])
    out = capsys.readouterr().out
    assert code == 1  # no Prometheus to check, and rank 2 has no file
    assert "a file for     2 of 3 ranks" in out
    assert "the first: rank 2 (gpu-node-001 GPU 0)" in out


def test_without_any_rank_map_it_says_it_cannot_test(capsys) -> None:
    assert main(["check-config", "--logs", "/nowhere/rank{rank}.log"]) == 1
    out = capsys.readouterr().out
    assert "not tested: no rank map to test it against (--rank-map FILE, or a Prometheus)" in out


REAL_TREE = Path(__file__).parents[1] / "logs" / "torchrun_real" / "logs"


def test_one_agents_log_dir_of_a_real_job_finds_every_rank() -> None:
    out = StringIO()
    assert check_logs(f"torchrun:{REAL_TREE / 'node0'}", GRID, out) is True
    text = out.getvalue()
    assert "a file for     8 of 8 ranks" in text
    assert f"rank 0: {REAL_TREE}/node0/myrun_cl3mrpnx/attempt_1/0/stderr.log" in text


def test_the_torchrun_preset_says_where_it_looked(tmp_path: Path) -> None:
    for name in ("node0", "node7"):  # node 1's folder is not there
        shutil.copytree(REAL_TREE / "node0", tmp_path / name)
    out = StringIO()
    assert check_logs(f"torchrun:{tmp_path}", GRID, out) is False
    text = out.getvalue()
    assert "a file for     4 of 8 ranks" in text
    assert (f"none for       4 ranks; the first: rank 4 (gpu-node-001 GPU 0): no file found for "
            f"rank 4 (gpu-node-001) with torchrun:{tmp_path}; looked in {tmp_path} for "
            "gpu-node-001, gpu-node-001.*, node1, node-1, node_1, 1: no 0/stderr.log or "
            "stdout.log under */attempt_*/") in text
