"""What looking for the newest "saved checkpoint" line adds to hang triage's scan.

    .venv/bin/python bench/checkpoint_scan.py [--ranks 512,16384] [--runs 5]

Every rank has 200 lines like the demo's (progress lines, NCCL INFO lines, its watchdog
timeout); rank 0's include a Megatron-LM checkpoint line. For each size, the medians of
``--runs`` runs: the whole scan (``HangScan.add``, which now also looks for the checkpoint),
and the checkpoint search alone (``newest_in_lines`` over every rank's lines, the default
pattern and a configured one), with its share of the scan.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.core.hang.checkpoint import DEFAULT, checkpoint_pattern, newest_in_lines
from ranktop.tui.core.hang.triage import HangScan

TAIL = 200
CONFIGURED = r"ckpt written: iter=(?P<step>\d+)"


def rank_lines(rank: int) -> list[str]:
    lines = []
    for i in range(TAIL - 4):
        if i % 3:
            lines.append(f"2026-03-14 02:01:{i % 60:02d},{i:03d} [rank {rank}] step {120_000 + i}"
                         f" loss 2.101 step_time 1.12s tokens/s 3.75e6")
        else:
            lines.append(f"gpu-node-000:2411:2411 [{rank % 8}] NCCL INFO Channel 00/0 : "
                         f"{rank} -> {rank + 1} via P2P/CUMEM")
    if rank == 0:
        lines.append("2026-03-14 02:02:23,016 INFO [rank 0] successfully saved checkpoint "
                     "from iteration  120100 to /checkpoints/iter_0120100")
    seq = 480_474
    lines += [
        f"[rank{rank}]:[E0314 02:03:22.148 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0"
        f"(default_pg) Rank {rank}] Watchdog caught collective operation timeout: "
        f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=6553600, NumelOut=6553600, "
        "Timeout(ms)=30000) ran for 30412 milliseconds before timing out.",
        f"[rank{rank}]:[E0314 02:03:22.149 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0"
        f"(default_pg) Rank {rank}] Timeout at NCCL work: {seq}, last enqueued NCCL work: "
        f"{seq}, last completed NCCL work: {seq - 1}.",
    ]
    return lines


def median_seconds(run, runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        run()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def measure(ranks: int, runs: int) -> None:
    logs = {rank: rank_lines(rank) for rank in range(ranks)}
    configured = checkpoint_pattern(CONFIGURED)

    def scan() -> None:
        HangScan(ranks).add(logs)

    def search(pattern) -> None:
        for rank, lines in logs.items():
            newest_in_lines(lines, pattern, rank)

    whole = median_seconds(scan, runs)
    default = median_seconds(lambda: search(DEFAULT), runs)
    own = median_seconds(lambda: search(configured), runs)
    print(f"{ranks:>7,} ranks x {TAIL} lines: scan {whole * 1000:8.1f} ms; checkpoint search "
          f"{default * 1000:7.1f} ms ({default / whole:.0%} of it), configured pattern "
          f"{own * 1000:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="512,16384")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for ranks in (int(r) for r in args.ranks.split(",")):
        measure(ranks, args.runs)


if __name__ == "__main__":
    main()
