"""Hang triage finds each rank's files once and keeps them while nothing they were found in
changes: a new attempt, a new rank file, a new rank map or time passing finds them anew."""

from __future__ import annotations

import os
from pathlib import Path

from ranktop.tui.core.model import RankMap
from ranktop.tui.logs import found_files, rank_logs
from ranktop.tui.logs.found_files import REFIND_SECONDS, FoundFiles
from ranktop.tui.logs.rank_logs import RankLogs

JOB = RankMap.grid(["gpu-node-001", "gpu-node-002"], 4, source="test")


def write_attempt(root: Path, attempt: int, ranks=range(8), text: str = "step") -> None:
    """torchrun's tree: every node's --log-dir by host, one run, this attempt."""
    for rank in ranks:
        node, local = divmod(rank, 4)
        folder = root / f"gpu-node-00{node + 1}" / "run_x" / f"attempt_{attempt}" / str(local)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "stderr.log").write_text(f"rank {rank} attempt {attempt} {text}\n")


class Looks:
    """How many times rank files were looked for (``find_logs`` calls)."""

    def __init__(self, monkeypatch) -> None:
        self.count = 0
        looked = rank_logs.find_logs

        def counted(*args, **kwargs):
            self.count += 1
            return looked(*args, **kwargs)
        monkeypatch.setattr(rank_logs, "find_logs", counted)


def test_a_second_triage_looks_for_no_file_again(tmp_path, monkeypatch) -> None:
    write_attempt(tmp_path, 0)
    logs, looks = RankLogs(f"torchrun:{tmp_path}"), Looks(monkeypatch)
    first = logs.triage_lines(JOB)
    assert looks.count == 8
    assert logs.triage_lines(JOB) == first and looks.count == 8


def test_a_new_attempt_is_read_by_the_next_triage(tmp_path) -> None:
    write_attempt(tmp_path, 0)
    logs = RankLogs(f"torchrun:{tmp_path}")
    assert "rank 5 attempt 0 step" in logs.triage_lines(JOB)[5][-1]
    write_attempt(tmp_path, 1)
    assert "rank 5 attempt 1 step" in logs.triage_lines(JOB)[5][-1]


def test_a_file_made_beside_one_found_is_found(tmp_path) -> None:
    write_attempt(tmp_path, 0)
    logs = RankLogs(f"torchrun:{tmp_path}")
    assert len(logs.triage_lines(JOB)[2]) == 1
    folder = tmp_path / "gpu-node-001" / "run_x" / "attempt_0" / "2"
    (folder / "stdout.log").write_text("rank 2 printed\n")
    os.utime(folder, ns=(1, 1))  # however coarse the file system's times
    assert "rank 2 printed" in logs.triage_lines(JOB)[2]


def test_a_rank_with_no_file_is_looked_for_again(tmp_path) -> None:
    write_attempt(tmp_path, 0, ranks=range(4))  # node 2 has written nothing yet
    logs = RankLogs(f"torchrun:{tmp_path}")
    assert logs.triage_lines(JOB)[6] == []
    write_attempt(tmp_path, 0, ranks=range(4, 8))
    assert "rank 6 attempt 0" in logs.triage_lines(JOB)[6][-1]


def test_a_new_rank_map_or_time_passing_looks_again(tmp_path) -> None:
    write_attempt(tmp_path, 0)
    now = [0.0]
    kept, looks = FoundFiles(clock=lambda: now[0]), []

    def find(rank: int) -> list[Path]:
        looks.append(rank)
        return [tmp_path / "gpu-node-001" / "run_x" / "attempt_0" / "0" / "stderr.log"]

    kept.finder(JOB, find)(0)
    kept.finder(JOB, find)(0)
    assert looks == [0]
    other = RankMap.grid(["gpu-node-001", "gpu-node-003"], 4, source="test")
    kept.finder(other, find)(0)
    assert looks == [0, 0]
    now[0] = REFIND_SECONDS - 1
    kept.finder(other, find)(0)
    assert looks == [0, 0]
    now[0] = REFIND_SECONDS
    kept.finder(other, find)(0)
    assert looks == [0, 0, 0]


def test_a_folder_gone_counts_as_changed(tmp_path) -> None:
    folder = tmp_path / "gone"
    folder.mkdir()
    watched = found_files._modified_ns(str(folder))
    folder.rmdir()
    assert watched >= 0 and found_files._modified_ns(str(folder)) == -1
