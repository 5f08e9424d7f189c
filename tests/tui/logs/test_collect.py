"""Every rank's recent lines for triage: rotated logs, shared logs split per rank, tails only."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from ranktop.tui.core.hang.triage import triage
from ranktop.tui.core.model import RankMap
from ranktop.tui.logs import collect, gztail
from ranktop.tui.logs.collect import lines_by_rank
from ranktop.tui.logs.rank_logs import RankLogs

GRID = RankMap.grid(["gpu-node-000", "gpu-node-001"], 4, source="test")
NOW = 1_800_000_000.0


def watchdog(rank: int, seq: int = 8812) -> str:
    return (f"[rank{rank}]:[E1122 03:04:05.123456789 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID"
            f" 0(default_pg) Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL("
            f"SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)="
            "600000) ran for 600032 milliseconds before timing out.")


def write(path: Path, lines: list[str], age: float = 0.0, data: bytes | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if data is not None else "".join(f"{x}\n" for x in lines).encode())
    os.utime(path, (NOW - age, NOW - age))
    return path


def steps(rank: int, count: int, start: int = 0) -> list[str]:
    return [f"[rank {rank}] step {start + i} loss 2.137" for i in range(count)]


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times each file was opened, and (key "bytes") the bytes read."""
    counts: dict[str, int] = {"bytes": 0}
    real_open, real_pread = os.open, os.pread

    def counting_open(path, *args, **kwargs):
        counts[str(path)] = counts.get(str(path), 0) + 1
        return real_open(path, *args, **kwargs)

    def counting_pread(fd, size, offset):
        data = real_pread(fd, size, offset)
        counts["bytes"] += len(data)
        return data

    monkeypatch.setattr(os, "open", counting_open)
    monkeypatch.setattr(os, "pread", counting_pread)
    return counts


# -- a rank's own file ------------------------------------------------------------------

def test_a_rank_gets_the_last_lines_of_its_file_oldest_first(tmp_path: Path) -> None:
    log = write(tmp_path / "rank0.log", [], data=b"one\ntwo\r\nthree\nfour, still wri")
    found = lines_by_rank({0: [log]}, GRID, 3)
    assert found == {0: ["two", "three", "four, still wri"]}


def test_ranks_without_files_or_lines_get_none(tmp_path: Path) -> None:
    empty = write(tmp_path / "rank1.log", [])
    gone = tmp_path / "rank2.log"  # listed, then deleted before it was read
    assert lines_by_rank({0: [], 1: [empty], 2: [gone]}, GRID, 10) == {0: [], 1: [], 2: []}
    assert lines_by_rank({1: [write(tmp_path / "r.log", ["x"])]}, GRID, 0) == {1: []}


def test_a_rank_with_two_files_gets_each_files_tail_the_last_written_last(tmp_path: Path) -> None:
    stderr = write(tmp_path / "stderr.log", ["nccl 1", "nccl 2", watchdog(0)], age=5)
    stdout = write(tmp_path / "stdout.log", steps(0, 500), age=1)
    found = lines_by_rank({0: [stderr, stdout]}, GRID, 2)[0]
    assert found == ["nccl 2", watchdog(0), *steps(0, 500)[-2:]]


def test_a_big_file_is_read_only_at_its_end(tmp_path: Path, opened: dict[str, int]) -> None:
    path = tmp_path / "rank0.log"
    with path.open("wb") as file:
        file.truncate(1 << 30)  # a sparse gigabyte before the lines
        file.seek(1 << 30)
        file.write("".join(f"{x}\n" for x in steps(0, 1000)).encode())
    found = lines_by_rank({0: [path]}, GRID, 200)[0]
    assert found == steps(0, 1000)[-200:]
    assert opened["bytes"] <= 128 * 1024


# -- rotation ---------------------------------------------------------------------------

def test_copytruncate_a_rank_just_rotated_still_shows_its_timeout(tmp_path: Path) -> None:
    # logrotate copied rank3.log to rank3.log.1, truncated it, and the rank wrote two lines.
    write(tmp_path / "rank3.log.1", [*steps(3, 50), watchdog(3)], age=30)
    current = write(tmp_path / "rank3.log", ["[rank3]: still here", "[rank3]: flushing"])
    found = lines_by_rank({3: [current]}, GRID, 20)[3]
    assert found == [*steps(3, 50)[-17:], watchdog(3), "[rank3]: still here", "[rank3]: flushing"]
    logs = {r: [watchdog(r)] for r in range(8) if r != 3}
    verdict = triage({**logs, 3: found}, world_size=8)
    assert verdict is not None and 3 in verdict.reporting and verdict.silent == []


def test_rename_and_create_while_the_writer_keeps_the_renamed_file(tmp_path: Path) -> None:
    # The new file was created at rotation; the process still appends to the old one.
    current = write(tmp_path / "rank3.log", [], age=60)
    write(tmp_path / "rank3.log.1", [*steps(3, 5), watchdog(3)], age=1)
    assert lines_by_rank({3: [current]}, GRID, 3)[3] == [*steps(3, 5)[-2:], watchdog(3)]


@pytest.mark.parametrize("name", ["rank3.log-20261122", "rank3.log.2026-11-22", "rank3.log-1"])
def test_dated_and_dashed_predecessors_are_read(tmp_path: Path, name: str) -> None:
    write(tmp_path / name, [watchdog(3)], age=30)
    current = write(tmp_path / "rank3.log", ["fresh"])
    assert lines_by_rank({3: [current]}, GRID, 5)[3] == [watchdog(3), "fresh"]


def test_older_predecessors_follow_until_there_are_enough_lines(tmp_path: Path) -> None:
    write(tmp_path / "rank3.log.2", steps(3, 10, start=0), age=300)
    write(tmp_path / "rank3.log.1", steps(3, 2, start=10), age=200)
    current = write(tmp_path / "rank3.log", steps(3, 1, start=12))
    assert lines_by_rank({3: [current]}, GRID, 5)[3] == steps(3, 5, start=8)
    assert lines_by_rank({3: [current]}, GRID, 100)[3] == steps(3, 13)


def test_a_compressed_predecessor_is_read(tmp_path: Path) -> None:
    text = "".join(f"{x}\n" for x in [*steps(3, 100), watchdog(3)]).encode()
    write(tmp_path / "rank3.log.1.gz", [], age=30, data=gzip.compress(text))
    current = write(tmp_path / "rank3.log", [])
    assert lines_by_rank({3: [current]}, GRID, 2)[3] == [steps(3, 100)[-1], watchdog(3)]


def test_a_compressed_predecessor_too_big_to_unpack_is_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(f"{x}\n" for x in steps(3, 2000)).encode()
    write(tmp_path / "rank3.log.1.gz", [], age=30, data=gzip.compress(text))
    current = write(tmp_path / "rank3.log", ["fresh"])
    monkeypatch.setattr(gztail, "GZ_MAX_BYTES", 100)
    assert lines_by_rank({3: [current]}, GRID, 5)[3] == ["fresh"]


def test_a_pattern_that_lists_the_predecessors_reads_them_once(tmp_path: Path) -> None:
    old = write(tmp_path / "rank3.log.1", ["old"], age=30)
    current = write(tmp_path / "rank3.log", ["new"])
    assert lines_by_rank({3: [current, old]}, GRID, 5)[3] == ["old", "new"]


# -- shared files -----------------------------------------------------------------------

def test_an_srun_labelled_file_is_split_per_rank(tmp_path: Path) -> None:
    lines = [f"{r:03d}: [rank{r}]: step {i}" for i in range(30) for r in range(8)]
    shared = write(tmp_path / "slurm-1234.out", [*lines, "unlabelled noise"])
    found = lines_by_rank({r: [shared] for r in range(8)}, GRID, 3)
    assert found[5] == [f"005: [rank5]: step {i}" for i in (27, 28, 29)]
    assert all(len(found[r]) == 3 for r in range(8))


def test_a_torchrun_console_of_one_node_is_split_by_local_rank(tmp_path: Path) -> None:
    lines = [f"[default{local}]:step {i}" for i in range(5) for local in range(4)]
    console = write(tmp_path / "gpu-node-001.out", lines)
    found = lines_by_rank({r: [console] for r in range(4, 8)}, GRID, 2)
    assert found[6] == ["[default2]:step 3", "[default2]:step 4"]


def test_an_nccl_file_of_one_host_is_split_by_device(tmp_path: Path) -> None:
    lines = [f"gpu-node-001:{4200 + d}:{4300 + d} [{d}] NCCL INFO Channel {i:02d}/0"
             for i in range(4) for d in range(4)]
    nccl = write(tmp_path / "nccl.gpu-node-001.log", lines)
    found = lines_by_rank({r: [nccl] for r in range(4, 8)}, GRID, 1)
    assert found == {4 + d: [f"gpu-node-001:{4200 + d}:{4300 + d} [{d}] NCCL INFO Channel 03/0"]
                     for d in range(4)}


def test_a_shared_file_is_read_once_and_only_its_tail(tmp_path: Path,
                                                     opened: dict[str, int]) -> None:
    path = tmp_path / "slurm-1234.out"
    with path.open("wb") as file:
        file.truncate(1 << 30)
        file.seek(1 << 30)
        file.write("".join(f"{r}: step {i}\n" for i in range(500) for r in range(8)).encode())
    found = lines_by_rank({r: [path] for r in range(8)}, GRID, 20)
    assert found[7][-1] == "7: step 499" and all(len(v) == 20 for v in found.values())
    assert opened[str(path)] == 1
    assert opened["bytes"] <= collect.NCCL_SNIFF_BYTES + 128 * 1024


def test_a_rank_that_went_quiet_is_found_further_back(tmp_path: Path) -> None:
    died = [f"5: step {i}" for i in range(3)] + ["5: terminate called after throwing"]
    later = [f"{r}: waiting {i}" for i in range(40) for r in range(8) if r != 5]
    shared = write(tmp_path / "slurm.out", [*died, *later])
    found = lines_by_rank({r: [shared] for r in range(8)}, GRID, 10)
    assert found[5] == died


def test_a_shared_file_stops_reading_at_its_budget(tmp_path: Path) -> None:
    lines = ["5: the one line of rank 5"] + [f"{r}: x {i}" for i in range(3000) for r in range(8)
                                             if r != 5]
    shared = write(tmp_path / "slurm.out", lines)
    found = lines_by_rank({r: [shared] for r in range(8)}, GRID, 10)
    assert found[5] == []  # further back than 2 x 10 lines x 8 ranks (read in 64 KB blocks)
    assert len(found[0]) == 10


def test_a_shared_slurm_output_gives_triage_each_ranks_own_story(tmp_path: Path) -> None:
    lines = [f"{r}: [rank {r}] step {i} loss 2.137" for i in range(50) for r in range(8)]
    lines += ["6: Traceback (most recent call last):",
              '6:   File "/job/train.py", line 88, in <module>',
              "6: RuntimeError: CUDA error: an illegal memory access was encountered"]
    for r in range(8):
        if r != 6:
            old = (f"[Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9,"
                   " OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800042 milliseconds before"
                   " timing out.")
            lines += [f"{r}: [E ProcessGroupNCCL.cpp:475] {old}",
                      f"{r}: terminate called after throwing an instance of 'std::runtime_error'",
                      f"{r}:   what():  {old}"]
    shared = write(tmp_path / "slurm-77.out", lines)
    found = lines_by_rank({r: [shared] for r in range(8)}, GRID, 200)
    verdict = triage(found, world_size=8)
    assert verdict is not None and verdict.dead == [6] and verdict.behind == [6]
    assert verdict.summary == ("rank 6 is dead (a CUDA error in its log): 7 of 7 live ranks timed"
                               " out in ALLREDUCE SeqNum 9")


def test_old_pytorch_lines_in_one_shared_file_are_split_per_rank(tmp_path: Path) -> None:
    """PyTorch <= 2.1 in one file for every rank (a Slurm output without srun -l): no
    [rankN]: prefix, only [Rank N] inside the watchdog's own header."""
    def old(rank: int) -> str:
        return (f"[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9,"
                " OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800042 milliseconds before"
                " timing out.")

    lines = [f"[I ProcessGroupNCCL.cpp:835] [Rank {r}] ProcessGroupNCCL initialized"
             for r in range(8)]
    for r in range(8):
        if r != 6:  # rank 6 froze: the others wait for it in SeqNum 9
            lines += [f"[E ProcessGroupNCCL.cpp:475] {old(r)}",
                      "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed"
                      " out. Due to the asynchronous nature of CUDA kernels, subsequent GPU"
                      " operations might run on corrupted/incomplete data.",
                      "terminate called after throwing an instance of 'std::runtime_error'",
                      f"  what():  {old(r)}"]
    shared = write(tmp_path / "slurm-77.out", lines)
    found = lines_by_rank({r: [shared] for r in range(8)}, GRID, 200)
    assert found[3] == ["[I ProcessGroupNCCL.cpp:835] [Rank 3] ProcessGroupNCCL initialized",
                        f"[E ProcessGroupNCCL.cpp:475] {old(3)}", f"  what():  {old(3)}"]
    assert found[6] == ["[I ProcessGroupNCCL.cpp:835] [Rank 6] ProcessGroupNCCL initialized"]
    verdict = triage(found, world_size=8)
    assert verdict is not None and verdict.sure is False
    assert verdict.reporting == [0, 1, 2, 3, 4, 5, 7] and verdict.silent == [6]


def test_a_pattern_listing_every_file_for_every_rank_is_grouped_in_linear_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pattern that names no rank (nccl.*.log over one file a process) lists every file
    for every rank: telling current files from rotated copies must not compare each file
    with each other file for each rank (at 512 ranks that took minutes, and no verdict)."""
    count = 64
    paths = [write(tmp_path / f"nccl.gpu-node-000.{pid}.log", [f"[rank{pid}]: step 1"])
             for pid in range(count)]
    calls = [0]
    real = collect.rotated_suffix

    def counted(current: str, candidate: str):
        calls[0] += 1
        return real(current, candidate)

    monkeypatch.setattr(collect, "rotated_suffix", counted)
    owners = collect._owners({rank: paths for rank in range(count)})
    assert len(owners) == count and all(len(ranks) == count for ranks in owners.values())
    assert calls[0] <= 4 * count * count  # each file of each rank looked up, not searched


def test_a_real_torchrun_agents_console_gives_each_rank_its_lines() -> None:
    """The agents' --tee consoles of a real job (``torchrun_real``), one per node, named
    with {node_rank}: each rank gets the lines of its local rank on its node."""
    consoles = Path(__file__).parent / "torchrun_real" / "console"
    found = RankLogs(f"{consoles}/node{{node_rank}}.log").triage_lines(GRID)
    for rank in range(8):
        own = found[rank]
        assert own and all(line.startswith(f"[default{rank % 4}]:") for line in own)
        restarts = [line for line in own if f"rank {rank} restart" in line]
        assert len(restarts) == 2  # both attempts' first lines, this rank's
    assert found[5][-1] == "[default1]:saved checkpoint at step 80"
