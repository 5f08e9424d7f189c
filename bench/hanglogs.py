"""Reading every rank's log for hang triage: 1,024 per-rank files and one shared 2 GB file
at 512 ranks; then the triage worker at 16,384 and 100,000 ranks, and the polls beside it.

    .venv/bin/python bench/hanglogs.py [--dir /tmp/ranktop-hanglogs] [--keep] [--size-gb 2]
                                       [--runs 5] [--ranks 16384,100000] [--old-up-to 16384]
                                       [--skip-layouts]

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
(rotated predecessors not read, shared files not split).

At each size of ``--ranks`` (one 24 KB log per rank, the same hang; 100,000 ranks need
2.5 GB): one run of the triage worker (``TriageWorker.run``, its default limits, rank 455
gone and so read first) timed ``--runs`` times, with bytes read, ranks read and the verdict;
the old way, every rank read inside the poll (up to ``--old-up-to`` ranks); and the demo's
own pipeline at that size polled back to back from before the death until the triage it
asks for has finished: poll times without a triage and while one runs, and how many polls
finished during it. Before this worker, the poll that asked waited for the whole read.

The files are reused when they are already there, and deleted at the end unless ``--keep``.
Timings on shared cores are noisy: compare figures of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.core.hang.triage import triage
from ranktop.tui.core.hang.watch import TriageAsk
from ranktop.tui.core.model import RankMap
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.logs.collect import lines_by_rank
from ranktop.tui.logs.rank_logs import RankLogs
from ranktop.tui.logs.tail import FileLog
from ranktop.tui.logs.triage_worker import TriageWorker
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

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


def ending(rank: int, host: str = "", local: int = -1) -> list[str]:
    """How the rank's log ends: the dead rank's CUDA error, or a timeout and a take-down."""
    if not host:
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


SCALE_FILE_BYTES = 24 * 1024
START = 1_800_000_000.0  # the demo's scenario starts here; rank 455 dies 172 s in


def scale_tree(root: Path, ranks: int) -> str:
    """One log per rank, ``n{node_rank}/rank{rank}.log``: chatter, then how it ended; the spec."""
    spec = str(root / "n{node_rank}" / "rank{rank}.log")
    if (root / "complete").exists():
        return spec
    started = time.perf_counter()
    rng = random.Random(3)
    lines, size = [], 0
    while size < SCALE_FILE_BYTES:
        i = len(lines)
        line = (f"[rank@R]: step {i} | loss {2 + rng.random():.4f} | lr 3.0e-04 | tokens/s"
                f" {rng.uniform(1, 2):.2f}M" if i % 3 else
                f"host:@P:@P [0] NCCL INFO Channel {i % 32:02d}/0 : via NET/IB/0 [send]")
        lines.append(line)
        size += len(line) + 1
    body = "".join(f"{line}\n" for line in lines)
    for rank in range(ranks):
        folder = root / f"n{rank // 8}"
        if rank % 8 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        end = ending(rank, f"gpu-node-{rank // 8:05d}", rank % 8)
        text = body.replace("@R", str(rank)).replace("@P", str(40000 + rank))
        (folder / f"rank{rank}.log").write_text(text + "".join(f"{x}\n" for x in end))
    (root / "complete").touch()
    print(f"wrote {ranks:,} logs in {time.perf_counter() - started:.0f} s")
    return spec


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker_runs(spec: str, rank_map: RankMap, runs: int) -> None:
    worker = TriageWorker(RankLogs(spec).triage_batches)
    ask = TriageAsk(1, START + 180, rank_map, suspects=(DEAD,), gone=(DEAD,))
    results = [worker.run(ask) for _ in range(runs)]
    times = [r.seconds for r in results]
    last = results[-1]
    limits = worker.limits
    print(f"  triage worker, limits {limits.seconds:g} s, {limits.max_bytes / MB:.0f} MB, "
          f"{limits.rank_bytes // 1024} KB a rank:")
    print(f"    per run {'  '.join(f'{t:.1f}' for t in times)} s, median "
          f"{statistics.median(times):.1f} s; {last.bytes_read / MB:.0f} MB read, "
          f"{last.ranks_read:,} of {last.ranks_total:,} ranks; peak RSS so far "
          f"{rss_mb():.0f} MB")
    print(f"    verdict: {last.verdict.summary[:160] if last.verdict else None}")


def old_way(spec: str, rank_map: RankMap) -> float:
    """Every rank's log read, as the analysis did inside the poll."""
    with ReadCounter() as counter:
        started = time.perf_counter()
        verdict = triage(RankLogs(spec).triage_lines(rank_map), len(rank_map), [DEAD])
        took = time.perf_counter() - started
    print(f"  old way, every rank read in the poll: {took:.1f} s, {counter.bytes / MB:.0f} MB"
          f" read; peak RSS so far {rss_mb():.0f} MB")
    print(f"    verdict: {verdict.summary[:160] if verdict else None}")
    return took


def polls_beside_triage(spec: str, ranks: int, old: float | None) -> None:
    """The demo's pipeline polled back to back: before the death, then while the triage it
    asked for runs (the demo's own clock moves 2 s a poll)."""
    settings = load_settings(overrides={"logs": {"spec": spec}}, environ={})
    clock = [START + 166.0]
    source = demo_source(DemoSettings(ranks // 8, 8, 7), lambda: clock[0], started=START)
    pipeline = Pipeline(settings, source, clock=lambda: clock[0])
    quiet, during, shown = [], [], None
    for _ in range(300):
        if shown is not None or (during and pipeline.triage.runs > 1):
            break
        busy = not pipeline.triage.wait(0)
        began = time.perf_counter()
        analysis = asyncio.run(pipeline.poll())
        took = time.perf_counter() - began
        clock[0] += 2.0
        if analysis.hang is not None:
            shown = len(during)
        elif busy or not pipeline.triage.wait(0):
            during.append(took)
        elif not during:
            quiet.append(took)
    pipeline.triage.wait(600)
    landed = "no verdict showed" if shown is None else "then the verdict showed"
    print(f"  polls of the demo at {ranks:,} ranks: {statistics.median(quiet):.2f} s without a"
          f" triage; while one ran {len(during)} polls finished, median "
          f"{statistics.median(during or [0]):.2f} s, worst {max(during or [0]):.2f} s;"
          f" {landed}")
    if old is not None:
        print(f"  before: the poll that asked waited for the whole read, "
              f"~{statistics.median(quiet) + old:.1f} s, and none finished meanwhile")


def scale(root: Path, ranks: int, runs: int, old_up_to: int) -> None:
    print(f"{ranks:,} ranks, one {SCALE_FILE_BYTES // 1024} KB log each, rank {DEAD} dead:")
    spec = scale_tree(root / f"ranks-{ranks}", ranks)
    rank_map = RankMap.grid([f"gpu-node-{n:05d}" for n in range(ranks // 8)], 8, "bench")
    worker_runs(spec, rank_map, runs)
    old = old_way(spec, rank_map) if ranks <= old_up_to else None
    polls_beside_triage(spec, ranks, old)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/ranktop-hanglogs"))
    parser.add_argument("--keep", action="store_true", help="keep the logs for next time")
    parser.add_argument("--size-gb", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ranks", default="16384,100000")
    parser.add_argument("--old-up-to", type=int, default=16384,
                        help="time the old whole read up to this many ranks")
    parser.add_argument("--skip-layouts", action="store_true", help="only the sizes")
    args = parser.parse_args()
    root = args.dir.resolve()
    root.mkdir(parents=True, exist_ok=True)
    sizes = [int(n) for n in args.ranks.split(",") if n]
    needed = sum(sizes) * (SCALE_FILE_BYTES + 4096)
    if not args.skip_layouts:
        needed += args.size_gb * GB + 1024 * 2 * PER_RANK_BYTES
    if shutil.disk_usage(root).free < needed:
        sys.exit(f"hanglogs: {root} has less than {needed / GB:.1f} GB free; use --dir")
    try:
        if not args.skip_layouts:
            measure("1,024 per-rank files (512 ranks, half just rotated)",
                    per_rank_tree(root / "torchrun"), args.runs, old_way=True)
            shared = root / "slurm-1234.out"
            shared_file(shared, int(args.size_gb * GB))
            measure(f"one shared {shared.stat().st_size / GB:.1f} GB file, srun -l, 512 ranks",
                    {r: [shared] for r in range(len(RANK_MAP))}, args.runs, old_way=False)
        for ranks in sizes:
            scale(root, ranks, min(args.runs, 3), args.old_up_to)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
