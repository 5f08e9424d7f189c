"""Which rank an NCCL_DEBUG_FILE file belongs to: only on evidence (its init line, its own
[rankN] labels, its host and device as the rank map places them), never by its device alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ranktop.tui.core.model import RankMap
from ranktop.tui.logs.discovery import find_logs
from ranktop.tui.logs.rank_logs import RankLogs

GRID = RankMap.grid([f"gpu-node-{n:03d}" for n in range(3)], 4, source="test")  # 12 ranks
NOW = 1_800_000_000.0


def nccl(host: str, pid: int, dev: int, message: str = "NCCL INFO Channel 00/0 : via NET/IB/0"
         ) -> str:
    return f"{host}:{pid}:{pid} [{dev}] {message}"


def init(host: str, pid: int, rank: int, dev: int, nranks: int = 12) -> str:
    return nccl(host, pid, dev, f"NCCL INFO ncclCommInitRankConfig comm 0x55d0c8a0e1f0 rank "
                f"{rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} busId 9b000 commId 0x1"
                " - Init COMPLETE")


def watchdog(rank: int) -> str:
    return (f"[rank{rank}]:[E1122 03:04:05.123456789 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID"
            f" 0(default_pg) Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL("
            "SeqNum=8, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600032 milliseconds.")


def write(path: Path, lines: list[str], age: float = 0.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines))
    os.utime(path, (NOW - age, NOW - age))
    return path


def rank_of(directory: Path, rank: int, pattern: str = "nccl.*.%p.log") -> list[Path]:
    place = GRID.ranks[rank]
    return find_logs(f"nccl:{directory}/{pattern}", place, place.node, place.gpu, len(GRID))


def test_another_hosts_file_is_never_picked_by_its_device(tmp_path: Path) -> None:
    # The init lines were rotated away; the only file left shows device 0 on node 1 (rank 4).
    write(tmp_path / "nccl.gpu-node-001.700.log", [nccl("gpu-node-001", 700, 0)])
    assert rank_of(tmp_path, 0) == []
    assert rank_of(tmp_path, 4) == [tmp_path / "nccl.gpu-node-001.700.log"]


def test_a_file_that_names_nothing_is_no_ranks(tmp_path: Path) -> None:
    write(tmp_path / "nccl.log", [nccl("gpu-node-000", 700, 0).split(" [")[0] + " step 12"])
    assert rank_of(tmp_path, 0, "nccl.log") == []


def test_the_rank_label_names_the_file_when_the_init_lines_are_gone(tmp_path: Path) -> None:
    mine = write(tmp_path / "nccl.gpu-node-002.810.log", ["step 3", watchdog(9)])
    write(tmp_path / "nccl.gpu-node-002.811.log", ["step 3", watchdog(10)], age=-5)
    assert rank_of(tmp_path, 9) == [mine]


def test_the_init_line_in_the_rotated_copy_still_names_the_file(tmp_path: Path) -> None:
    live = write(tmp_path / "nccl.gpu-node-002.810.log", ["[rank 9] step 3 loss 2.1"])
    write(tmp_path / "nccl.gpu-node-002.810.log.1", [init("gpu-node-002", 810, 9, 1)], age=60)
    write(tmp_path / "nccl.gpu-node-002.811.log", ["[rank 10] step 3 loss 2.1"])
    assert rank_of(tmp_path, 9) == [live]
    assert rank_of(tmp_path, 10) == []


def test_one_gpu_a_process_the_device_tells_nothing(tmp_path: Path) -> None:
    # CUDA_VISIBLE_DEVICES gives each process its own GPU: every file shows device 0.
    for local in range(4):
        write(tmp_path / f"nccl.gpu-node-001.{900 + local}.log",
              [nccl("gpu-node-001", 900 + local, 0)], age=local)
    logs = RankLogs(f"nccl:{tmp_path}/nccl.%h.%p.log")
    paths, note = logs.files(GRID, 4)
    assert paths == []
    assert "no file found for rank 4 (gpu-node-001)" in note
    assert "4 files of gpu-node-001 name no rank" in note


def test_a_rank_with_no_file_is_told_which_files_named_no_rank(tmp_path: Path) -> None:
    write(tmp_path / "nccl.gpu-node-000.700.log", ["step 1"])
    write(tmp_path / "nccl.gpu-node-000.701.log", [watchdog(1)])
    paths, note = RankLogs(f"nccl:{tmp_path}/nccl.*.log").files(GRID, 0)
    assert paths == []
    assert note.endswith("1 file of gpu-node-000 name no rank (e.g. nccl.gpu-node-000.700.log: "
                         "no NCCL init line, no [rankN] label, no device that tells): not shown"
                         " as this rank's")


@pytest.mark.parametrize("pattern", ["nccl.*.%p.log", "nccl.%h.%p.log"])
def test_every_rank_gets_its_own_file_whatever_the_pattern(tmp_path: Path, pattern: str) -> None:
    for place in GRID.ranks:
        pid = 1000 + place.rank
        write(tmp_path / f"nccl.{place.host}.{pid}.log.1", [init(place.host, pid, place.rank,
                                                                  place.gpu)], age=60)
        write(tmp_path / f"nccl.{place.host}.{pid}.log", [nccl(place.host, pid, place.gpu)])
    logs = RankLogs(f"nccl:{tmp_path}/{pattern}")
    for rank in range(12):
        (path,) = logs.files(GRID, rank)[0]
        assert path.name == f"nccl.{GRID.ranks[rank].host}.{1000 + rank}.log"
    lines = logs.triage_lines(GRID)
    assert lines[5] == [init("gpu-node-001", 1005, 5, 1), nccl("gpu-node-001", 1005, 1)]


def test_a_fifo_among_the_files_is_never_waited_on(tmp_path: Path) -> None:
    import threading

    os.mkfifo(tmp_path / "nccl.gpu-node-000.666.log")  # nobody ever writes to it
    # ... and one where a file's rotated copy should be, read when the file names no rank
    write(tmp_path / "nccl.gpu-node-002.800.log", ["no NCCL line here"])
    os.mkfifo(tmp_path / "nccl.gpu-node-002.800.log.1")
    write(tmp_path / "nccl.gpu-node-001.700.log", [nccl("gpu-node-001", 700, 0)])
    found: list[list[Path]] = []
    looking = threading.Thread(target=lambda: found.append(rank_of(tmp_path, 4)), daemon=True)
    looking.start()
    looking.join(30.0)  # a deadline for a broken reader, not a measure of speed
    assert found == [[tmp_path / "nccl.gpu-node-001.700.log"]]
