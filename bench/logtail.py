"""Reading a rank's log: ranktop's tail against tail(1), and memory while a log grows fast.

    .venv/bin/python bench/logtail.py [--file /tmp/ranktop-logtail.log] [--keep]
                                      [--seconds 60] [--rate-mb 10] [--size-gb 2]

1. A 2 GB log of mixed training, NCCL and PyTorch lines is written to ``--file`` (reused
   when it is already there at full size; deleted at the end unless ``--keep``). Then
   ``FileLog(path).tail(200)`` and ``tail -n 200 path`` (output discarded) are timed in
   turn, 5 times each, and the medians printed.
2. A writer thread appends to a second file at 10 MB/s for 60 s while the main loop calls
   ``follow()`` every 0.25 s and keeps the last 5,000 lines, as the log view does. The
   process's RSS (VmRSS in /proc/self/status) is printed at the start, its maximum, and at
   the end.

Needs 4 GB free where ``--file`` lives.
"""

from __future__ import annotations

import argparse
import collections
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.logs.tail import FileLog

GB = 1 << 30
MB = 1 << 20
NEEDED_FREE = 4 * GB
RUNS = 5
TAIL_LINES = 200
FOLLOW_EVERY = 0.25
KEEP_LINES = 5000


def realistic_block(seed: int, size: int) -> bytes:
    """About ``size`` bytes of the lines a rank's log holds, in a plausible mix."""
    rng = random.Random(seed)
    host, pid = "gpu-node-017", 48211
    makers = [
        (60, lambda i: f"[default3]:step {i} | loss {2 + rng.random():.4f} | lr 3.0e-04 | "
                       f"grad_norm {rng.random() * 4:.3f} | tokens/s {rng.uniform(1, 2):.2f}M"),
        (25, lambda i: f"{host}:{pid}:{pid + 91} [3] NCCL INFO Channel {i % 32:02d}/0 : "
                       f"{i % 64}[3] -> {(i + 8) % 64}[3] [send] via NET/IB/{i % 4}"),
        (8, lambda i: f"{host}:{pid}:{pid} [3] NCCL INFO comm 0x55d0c8a0e1f0 rank 11 nranks 64 "
                      f"cudaDev 3 nvmlDev 3 busId 9b000 commId 0x8a3f2c1d{i:08x} - Init COMPLETE"),
        (4, lambda i: f"\n[2026-01-02 03:04:{i % 60:02d}] {host}:{pid}:{pid + 90} [3] "
                      "transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
                      "10.18.4.22<44021> with status=12 opcode=0 len=0 vendor err 129 (Recv)"),
        (2, lambda i: f"[rank11]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 11] "
                      f"Watchdog caught collective operation timeout: WorkNCCL(SeqNum={i}, "
                      "OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) "
                      "ran for 600031 milliseconds before timing out."),
        (1, lambda i: "[default3]:RuntimeError: CUDA error: an illegal memory access was "
                      "encountered"),
    ]
    weights = [weight for weight, _ in makers]
    out, total, i = [], 0, 0
    while total < size:
        _, make = rng.choices(makers, weights)[0]
        line = (make(i) + "\n").encode()
        out.append(line)
        total += len(line)
        i += 1
    return b"".join(out)


def check_space(directory: Path) -> None:
    free = shutil.disk_usage(directory).free
    if free < NEEDED_FREE:
        sys.exit(f"logtail: only {free / GB:.1f} GB free in {directory}; this benchmark needs "
                 f"{NEEDED_FREE / GB:.0f} GB. Point --file somewhere else.")


def write_big_log(path: Path, size: int) -> None:
    if path.exists() and path.stat().st_size >= size:
        print(f"reusing {path} ({path.stat().st_size / GB:.2f} GB)")
        return
    started = time.perf_counter()
    block = realistic_block(1, 16 * MB)
    with path.open("wb") as file:
        written = 0
        while written < size:
            file.write(block)
            written += len(block)
    print(f"wrote {path} ({written / GB:.2f} GB) in {time.perf_counter() - started:.1f} s")


def time_tails(path: Path) -> None:
    ours, theirs, read = [], [], 0
    for _ in range(RUNS):
        started = time.perf_counter()
        log = FileLog(path)
        lines = log.tail(TAIL_LINES)
        ours.append(time.perf_counter() - started)
        read = log.bytes_read
        log.close()
        started = time.perf_counter()
        subprocess.run(["tail", "-n", str(TAIL_LINES), str(path)], stdout=subprocess.DEVNULL,
                       check=True)
        theirs.append(time.perf_counter() - started)
    assert len(lines) == TAIL_LINES
    print(f"tail of {TAIL_LINES} lines of a {path.stat().st_size / GB:.2f} GB log, {RUNS} runs:")
    print("  FileLog.tail:  " + "  ".join(f"{t * 1000:.2f}" for t in ours)
          + f" ms   median {statistics.median(ours) * 1000:.2f} ms, {read:,} bytes read")
    print("  tail -n (1):   " + "  ".join(f"{t * 1000:.2f}" for t in theirs)
          + f" ms   median {statistics.median(theirs) * 1000:.2f} ms (a process start included)")


def rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Writer(threading.Thread):
    """Appends to a log at a steady rate, in 50 ms slices."""

    def __init__(self, path: Path, rate: float, seconds: float) -> None:
        super().__init__(daemon=True)
        self.path, self.rate, self.seconds = path, rate, seconds
        self.block = realistic_block(2, 8 * MB)
        self.written = 0

    def run(self) -> None:
        started = time.monotonic()
        with self.path.open("ab", buffering=0) as file:
            while (elapsed := time.monotonic() - started) < self.seconds:
                due = int(min(elapsed + 0.05, self.seconds) * self.rate)
                while self.written < due:
                    at = self.written % len(self.block)
                    piece = self.block[at:at + due - self.written]
                    file.write(piece)
                    self.written += len(piece)
                time.sleep(max(0.0, started + due / self.rate - time.monotonic()))


def follow_memory(path: Path, rate: float, seconds: float) -> None:
    path.write_bytes(b"")
    log = FileLog(path)
    shown = collections.deque(log.tail(TAIL_LINES), maxlen=KEEP_LINES)
    writer = Writer(path, rate, seconds)  # its data is made before the first reading
    start_rss = peak = rss_kb()
    writer.start()
    lines = skips = 0
    costs = []
    due = time.monotonic()
    while writer.is_alive():
        due += FOLLOW_EVERY
        time.sleep(max(0.0, due - time.monotonic()))
        started = time.perf_counter()
        new = log.follow()
        costs.append(time.perf_counter() - started)
        lines += len(new)
        skips += sum(1 for line in new if line.text.startswith("[ranktop: skipped "))
        shown.extend(new)
        peak = max(peak, rss_kb())
    writer.join()
    new = log.follow()
    lines += len(new)
    shown.extend(new)
    end_rss = rss_kb()
    log.close()
    print(f"follow() every {FOLLOW_EVERY} s while a writer appends {rate / MB:.0f} MB/s for "
          f"{seconds:.0f} s ({writer.written / MB:.0f} MB, {lines:,} lines returned, "
          f"{skips} skip markers, {len(shown):,} kept):")
    print(f"  RSS: start {start_rss / 1024:.1f} MB, max {peak / 1024:.1f} MB, "
          f"end {end_rss / 1024:.1f} MB")
    print(f"  follow() time per call: median {statistics.median(costs) * 1000:.1f} ms, "
          f"max {max(costs) * 1000:.1f} ms ({len(costs)} calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=Path("/tmp/ranktop-logtail.log"))
    parser.add_argument("--keep", action="store_true", help="keep the big log for next time")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rate-mb", type=float, default=10.0)
    parser.add_argument("--size-gb", type=float, default=2.0)
    args = parser.parse_args()
    path = args.file.resolve()
    check_space(path.parent)
    growing = path.with_name(path.name + ".growing")
    try:
        write_big_log(path, int(args.size_gb * GB))
        time_tails(path)
        follow_memory(growing, args.rate_mb * MB, args.seconds)
    finally:
        growing.unlink(missing_ok=True)
        if not args.keep:
            path.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
