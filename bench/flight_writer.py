"""The demo's Flight Recorder writer: the time to write every rank's dump of one hang.

    .venv/bin/python bench/flight_writer.py [--ranks 10000 100000] [--budget 120]

A job of ``--ranks`` ranks hangs in an all-reduce (a mismatched rank); its watchdogs fire
30 s later and every rank writes its dump within the next second of simulated time. The
writer is advanced through that second in steps of 10 ms, as polls would, until every dump
is written or ``--budget`` wall seconds have passed (then the rate so far is printed). The
dumps go to a temporary folder under ``--dir``, removed afterwards.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.flight_writer import PREFIX, FlightWriter
from ranktop.tui.simulator.scenario import Fault, Scenario

START = 20.0
FIRES = START + 30.0  # the watchdog timeout of the demo
STEP = 0.01


def one_hang(ranks: int) -> SimCluster:
    fault = Fault("collective_hang", 5, START, 60.0, {"cause": "mismatch", "dumps": "pickle"})
    return SimCluster(ranks // 8, 8, 3, Scenario("bench", 120.0, 1.12, 4_194_304, (fault,)))


def measure(ranks: int, budget: float, folder: Path) -> str:
    root = Path(tempfile.mkdtemp(prefix="ranktop-fr-bench-", dir=folder))
    try:
        writer = FlightWriter(one_hang(ranks), root / "fr", seed=3)
        writer.advance(FIRES - STEP)
        began = time.perf_counter()
        t = FIRES
        while t < FIRES + 1.0 + STEP and time.perf_counter() - began < budget:
            writer.advance(t)
            t += STEP
        took = time.perf_counter() - began
        dumps = [p for p in (root / "fr").iterdir() if p.name.startswith(PREFIX)]
        written = len(dumps)
        inodes = {p.stat().st_ino: p.stat().st_blocks for p in (root / "fr").iterdir()}
        blocks = sum(inodes.values()) * 512  # a file linked under many names counts once
        done = "all" if written == ranks else f"{written:,} of {ranks:,} (budget spent)"
        return (f"{ranks:>7,} ranks: {done} dumps in {took:.1f} s, "
                f"{took / max(written, 1) * 1e3:.2f} ms per dump, {blocks / 2**20:.1f} MiB on disk")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--budget", type=float, default=120.0, help="wall seconds per size")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    for ranks in args.ranks:
        print(measure(ranks, args.budget, args.dir), flush=True)


if __name__ == "__main__":
    main()
