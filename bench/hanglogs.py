"""Reading every rank's log for hang triage: 1,024 per-rank files, and one shared 2 GB file.

    .venv/bin/python bench/hanglogs.py [--dir /tmp/ranktop-hanglogs] [--keep] [--size-gb 2]
                                       [--runs 5]

512 ranks (64 hosts x 8 GPUs) hang in an all-reduce: rank 455 dies of a CUDA error, the
other 511 time out and are taken down by their watchdogs. Two layouts of the same logs:

1. torchrun ``--log-dir`` trees: 1,024 files (stderr.log and stdout.log per rank), 256 KB
   of mixed NCCL, PyTorch and training lines each; half the ranks' stderr.log was just
   rotated by copytruncate between its timeout and its end (the last 2 lines in the current
   file, the rest, the timeout included, in ``stderr.log.1``).
2. One Slurm output of 2 GB (``srun -l``: every line labelled with its rank), the hang at
   its end, rank 455's last lines a little further back than the others'.

For each, ``lines_by_rank(files, rank_map, 200)`` and then ``triage`` on its result are
timed ``--runs`` times and the medians printed, with the bytes read (os.pread, counted) and
the verdict. For layout 1 the old way is timed too: ``FileLog(path).tail(200)`` per file
(rotated predecessors not read, shared files not split). The files are reused when they are
already there, and deleted at the end unless ``--keep``. Needs 2.5 GB free.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.core.hang import triage
from ranktop.tui.core.model import RankMap
from ranktop.tui.logs.collect import lines_by_rank
from ranktop.tui.logs.tail import FileLog

MB = 1 << 20
GB = 1 << 30
HOSTS = [f"gpu-node-{n:03d}" for n in range(64)]
RANK_MAP = RankMap.grid(HOSTS, 8, source="bench")
DEAD = 455
SEQ = 48113
TAIL = 200
PER_RANK_BYTES = 128 * 1024  # per file: stderr and stdout each


def chatter(rank: int, rng: random.Random, i: int) -> str:
    """One of the lines a healthy rank writes, in a plausible mix."""
    host, local = RANK_MAP.ranks[rank].host, RANK_MAP.ranks[rank].gpu
    pid = 40000 + rank
    roll = rng.random()
    if roll < 0.6:
        return (f"[rank{rank}]: step {i} | loss {2 + rng.random():.4f} | lr 3.0e-04 | "
                f"grad_norm {rng.random() * 4:.3f} | tokens/s {rng.uniform(1, 2):.2f}M")
    if roll < 0.95:
        return (f"{host}:{pid}:{pid + 91} [{local}] NCCL INFO Channel {i % 32:02d}/0 : "
                f"{rank}[{local}] -> {(rank + 8) % 512}[{local}] [send] via NET/IB/{local}")
    return (f"[rank{rank}]:[W1122 03:0{i % 10}:00.000000000 Utils.hpp:135] Warning: "
            "Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated")


def ending(rank: int) -> list[str]:
    """How the rank's log ends: the dead rank's CUDA error, or a timeout and a take-down."""
    host, local = RANK_MAP.ranks[rank].host, RANK_MAP.ranks[rank].gpu
    pid = 40000 + rank
    if rank == DEAD:
        return ["", f"[2026-11-22 03:04:05] {host}:{pid}:{pid + 211} [{local}] enqueue.cc:1556"
                " NCCL WARN Cuda failure 'unspecified launch failure'",
                "terminate called after throwing an instance of 'c10::DistBackendError'"]
    pg = f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}]"
    glog = f"[rank{rank}]:[E1122 03:14:05.123456789 ProcessGroupNCCL.cpp:{{}}] {pg} "
    return [
        glog.format(632) + "Watchdog caught collective operation timeout: WorkNCCL(SeqNum="
        f"{SEQ}, OpType=ALLREDUCE, NumelIn=6553600, NumelOut=6553600, Timeout(ms)=600000) ran"
        " for 600031 milliseconds before timing out.",
        glog.format(2168) + f"Timeout at NCCL work: {SEQ}, last enqueued NCCL work: {SEQ}, last"
        f" completed NCCL work: {SEQ - 1}.",
        glog.format(1595) + "Some NCCL operations have failed or timed out. Due to the"
        " asynchronous nature of CUDA kernels, subsequent GPU operations might run on"
        " corrupted/incomplete data.",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
    ]


def fill(rank: int, size: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    lines, total, i = [], 0, 0
    while total < size:
        line = chatter(rank, rng, i)
        lines.append(line)
        total += len(line) + 1
        i += 1
    return lines


def write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines))


def per_rank_tree(root: Path) -> dict[int, list[Path]]:
    """torchrun's layout, 1,024 files; ranks of even hosts rotated by copytruncate."""
    files: dict[int, list[Path]] = {}
    for rank in RANK_MAP.ranks:
        attempt = root / rank.host / "job_abcd1234" / "attempt_0" / str(rank.gpu)
        stderr, stdout = attempt / "stderr.log", attempt / "stdout.log"
        files[rank.rank] = [stderr, stdout]
        if stderr.exists():
            continue
        write_lines(stdout, fill(rank.rank, PER_RANK_BYTES, rank.rank))
        lines = [*fill(rank.rank, PER_RANK_BYTES, 10_000 + rank.rank), *ending(rank.rank)]
        if rank.node % 2 == 0 and rank.rank != DEAD:  # copytruncate: 2 lines since
            write_lines(attempt / "stderr.log.1", lines[:-2])
            os.utime(attempt / "stderr.log.1", (time.time() - 60, time.time() - 60))
            lines = lines[-2:]
        write_lines(stderr, lines)
    return files


def shared_file(path: Path, size: int) -> None:
    if path.exists() and path.stat().st_size >= size:
        print(f"reusing {path} ({path.stat().st_size / GB:.2f} GB)")
        return
    started = time.perf_counter()
    rng = random.Random(7)
    block_lines = [f"{r}: {chatter(r, rng, i)}" for i in range(300) for r in range(512)]
    block = "".join(f"{line}\n" for line in block_lines).encode()
    tail = [f"{DEAD}: {line}" for line in ending(DEAD)]
    tail += [f"{r}: {chatter(r, rng, 9)}" for r in range(512) if r != DEAD]
    tail += [f"{r}: {line}" for r in range(512) if r != DEAD for line in ending(r)]
    with path.open("wb") as file:
        written = 0
        while written < size:
            file.write(block)
            written += len(block)
        file.write("".join(f"{line}\n" for line in tail).encode())
    print(f"wrote {path} ({path.stat().st_size / GB:.2f} GB) in "
          f"{time.perf_counter() - started:.1f} s")


class ReadCounter:
    """Counts the bytes os.pread returns while installed."""

    def __init__(self) -> None:
        self.bytes = 0
        self._real = os.pread

    def __enter__(self) -> ReadCounter:
        def counting(fd: int, size: int, offset: int) -> bytes:
            data = self._real(fd, size, offset)
            self.bytes += len(data)
            return data
        os.pread = counting
        return self

    def __exit__(self, *exc: object) -> None:
        os.pread = self._real


def timed(runs: int, work: Callable[[], object]) -> tuple[list[float], object, int]:
    times, result, read = [], None, 0
    for _ in range(runs):
        with ReadCounter() as counter:
            started = time.perf_counter()
            result = work()
            times.append(time.perf_counter() - started)
        read = counter.bytes
    return times, result, read


def show(label: str, times: list[float], read: int) -> None:
    runs = "  ".join(f"{t * 1000:.0f}" for t in times)
    print(f"  {label:<34} {runs} ms   median {statistics.median(times) * 1000:.0f} ms, "
          f"{read / MB:.1f} MB read")


def measure(name: str, files: dict[int, list[Path]], runs: int, old_way: bool) -> None:
    print(f"{name}:")
    times, found, read = timed(runs, lambda: lines_by_rank(files, RANK_MAP, TAIL))
    show("lines_by_rank", times, read)
    times, verdict, _ = timed(runs, lambda: triage(found, len(RANK_MAP)))
    show("triage", times, 0)
    print(f"  verdict: {verdict.summary if verdict else None}")
    if old_way:
        def per_file() -> dict[int, list[str]]:
            return {r: [line.text for p in paths for line in FileLog(p).tail(TAIL)]
                    for r, paths in files.items()}
        times, old, read = timed(runs, per_file)
        show("old: FileLog.tail per file", times, read)
        verdict = triage(old, len(RANK_MAP))
        print(f"  its verdict: {verdict.summary if verdict else None}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/ranktop-hanglogs"))
    parser.add_argument("--keep", action="store_true", help="keep the logs for next time")
    parser.add_argument("--size-gb", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = args.dir.resolve()
    root.mkdir(parents=True, exist_ok=True)
    needed = args.size_gb * GB + 1024 * 2 * PER_RANK_BYTES
    if shutil.disk_usage(root).free < needed:
        sys.exit(f"hanglogs: {root} has less than {needed / GB:.1f} GB free; use --dir")
    try:
        measure("1,024 per-rank files (512 ranks, half just rotated)",
                per_rank_tree(root / "torchrun"), args.runs, old_way=True)
        shared = root / "slurm-1234.out"
        shared_file(shared, int(args.size_gb * GB))
        measure(f"one shared {shared.stat().st_size / GB:.1f} GB file, srun -l, 512 ranks",
                {r: [shared] for r in range(len(RANK_MAP))}, args.runs, old_way=False)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
