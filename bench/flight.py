"""Reading Flight Recorder dumps: 512 ranks x 2,000 entries, and the demo hang's latency.

    .venv/bin/python bench/flight.py [--dir /tmp/ranktop-flight] [--ranks 512]
                                     [--entries 2000] [--runs 3] [--keep]

1. **Reading.** 512 dumps of 2,000 entries each, as PyTorch writes them by default (a ring
   of 2,000, pickled, five stack frames per entry), rank 455 entered the hung all-reduce
   with other sizes. Each run reads them all in a fresh Python process
   (``read_dumps`` then ``analyse_dumps``) and prints its wall time, its peak resident set
   (``ru_maxrss``) and the verdict. For scale, the same process also reads them the naive
   way (every dump unpickled whole and kept, as an offline analyzer does). Then the same for
   the JSON variant, and a second read through the cache (nothing changed: no file parsed).
2. **Latency.** The demo (512 ranks) polled every 2 s of simulated time through the
   pipeline from 196 s, on a fixed clock: when the last rank's dump lands, and when the
   analysis first names the culprit from them. Simulated seconds, so the figure is the
   design's (poll interval, triage cadence), not this machine's; the wall time of the poll
   that read the dumps is printed too.
3. **On demand.** 512 simulated ranks listen on their debug pipes (FIFOs, one thread with a
   selector); each answers a byte by writing its dump of 2,000 entries (prepared beforehand:
   a real rank's writing happens on its own machine). Timed from the key's confirmed
   request (``request_dumps``) to the last dump landing, and to the verdict naming rank 455
   (``FlightDumps.verdict``, cold read), in wall-clock seconds.

Timings depend on the machine and on what else runs: compare the figures of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.simulator.flight_writer import PREFIX, dump_document, write_dump

CULPRIT = 455
SEQ = 480_474

CHILD = r"""
import json, pickle, resource, sys, time
from pathlib import Path
from ranktop.tui.core.hang.flight_triage import analyse_dumps
from ranktop.tui.flight.reader import read_dumps
mode, folder, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
began = time.perf_counter()
if mode == "naive":
    kept = {}
    for path in sorted(Path(folder).glob("comm_lib_trace_rank_*")):
        data = path.read_bytes()
        kept[path.name] = json.loads(data) if data[:1] == b"{" else pickle.loads(data)
    verdict = f"{len(kept)} dumps held whole"
else:
    cache = {}
    found = analyse_dumps(read_dumps(folder, ranks, cache=cache))
    if mode == "cached":
        began = time.perf_counter()
        found = analyse_dumps(read_dumps(folder, ranks, cache=cache))
    verdict = f"{found.kind} {found.culprits} {found.op} SeqNum {found.seq} at {found.call_site}"
seconds = time.perf_counter() - began
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(
    resource.RUSAGE_SELF).ru_maxrss / 1024, "verdict": verdict}))
"""


def write_dumps(folder: Path, ranks: int, entries: int, form: str) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for rank in range(ranks):
        role = "mismatch" if rank == CULPRIT % ranks else "waiting"
        doc = dump_document(rank, ranks, SEQ, entries=entries, role=role, form=form,
                            began_ns=1_800_000_000 * 10**9)
        path = folder / f"{PREFIX}{rank}"
        write_dump(path, doc, form)
        total += path.stat().st_size
    return total


def child(mode: str, folder: Path, ranks: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(folder), str(ranks)],
                         capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    return json.loads(out.stdout)


def baseline_rss() -> float:
    code = ("import resource, ranktop.tui.flight.reader, ranktop.tui.core.hang.flight_triage;"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                text=True, check=True).stdout)


def reading(args: argparse.Namespace) -> None:
    base = baseline_rss()
    print(f"a Python process with the reader imported: {base:.0f} MB peak RSS")
    for form in ("pickle", "json"):
        folder = args.dir / form
        started = time.perf_counter()
        size = write_dumps(folder, args.ranks, args.entries, form)
        print(f"\n{form}: {args.ranks} dumps x {args.entries} entries, {size / 2**20:.0f} MB"
              f" on disk (written in {time.perf_counter() - started:.1f} s)")
        for mode in ("ranktop", "cached", "naive"):
            runs = [child(mode, folder, args.ranks) for _ in range(args.runs)]
            seconds = statistics.median(r["seconds"] for r in runs)
            peak = max(r["peak_mb"] for r in runs)
            print(f"  {mode:<8} {seconds:6.2f} s median of {args.runs}   peak RSS {peak:5.0f} MB"
                  f" (+{peak - base:.0f} MB)   {runs[0]['verdict']}")


def latency() -> None:
    from ranktop.tui.engine.pipeline import Pipeline
    from ranktop.tui.settings.config import DemoSettings, load_settings
    from ranktop.tui.sources.demo import demo_source

    start = 1_800_000_000.0
    clock = _Clock(start + 196.0)
    with tempfile.TemporaryDirectory(prefix="ranktop-flight-latency-") as folder:
        source = demo_source(DemoSettings(64, 8, 7), clock, started=start,
                             log_root=Path(folder) / "logs")
        pipeline = Pipeline(load_settings(environ={}), source)
        dumps = Path(folder) / "logs" / "flight-recorder"
        landed, named, slowest = None, None, 0.0
        while clock.now < start + 260.0 and named is None:
            began = time.perf_counter()
            analysis = asyncio.run(pipeline.poll())
            took = time.perf_counter() - began
            pipeline.triage.wait(60.0)  # as if it finished within the 2 s to the next poll
            files = list(dumps.glob(f"{PREFIX}*")) if dumps.exists() else []
            if len(files) == 511 and landed is None:
                landed = max(p.stat().st_mtime for p in files)
            flight = analysis.hang.flight if analysis.hang else None
            if flight is not None and CULPRIT in flight.culprits:
                named, slowest = clock.now, took
            clock.now += 2.0
        source.close()
    if landed is None or named is None:
        print("\nlatency: the culprit was not named from the dumps")
        return
    print(f"\nlatency (demo, 512 ranks, 2 s polls, simulated time): the last of 511 dumps"
          f" landed at {landed - start:.1f} s, the analysis named rank {CULPRIT} from them at"
          f" {named - start:.1f} s: {named - landed:.1f} s later; that poll took"
          f" {slowest:.2f} s of wall time (logs and dumps read)")


class _Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def on_demand(args: argparse.Namespace) -> None:
    import os
    import pickle
    import selectors
    import threading

    from ranktop.tui.flight.pipes import find_pipes, request_dumps
    from ranktop.tui.flight.watch import FlightDumps

    folder = args.dir / "on-demand"
    folder.mkdir(parents=True, exist_ok=True)
    prepared = {}
    for rank in range(args.ranks):
        role = "mismatch" if rank == CULPRIT % args.ranks else "waiting"
        prepared[rank] = pickle.dumps(dump_document(rank, args.ranks, SEQ, entries=args.entries,
                                                    role=role), protocol=2)
        os.mkfifo(folder / f"trace_{rank}.pipe")
    selector = selectors.DefaultSelector()
    for rank in range(args.ranks):
        # Read and write: the pipe then never reads as closed while no one writes.
        fd = os.open(folder / f"trace_{rank}.pipe", os.O_RDWR | os.O_NONBLOCK)
        selector.register(fd, selectors.EVENT_READ, rank)
    landed: list[float] = []

    def ranks_listen() -> None:
        while len(landed) < args.ranks:
            for key, _ in selector.select(timeout=5):
                if os.read(key.fd, 16):
                    rank = key.data
                    (folder / f"{PREFIX}{rank}").write_bytes(prepared[rank])
                    landed.append(time.perf_counter())
                    selector.unregister(key.fd)
                    os.close(key.fd)

    listener = threading.Thread(target=ranks_listen, daemon=True)
    listener.start()
    dumps = FlightDumps(str(folder), wait_seconds=0.5)
    pipes = find_pipes(str(folder / "trace_"), args.ranks)
    began = time.perf_counter()
    asked = request_dumps(pipes)
    requested = time.perf_counter()
    listener.join(120)
    named = None
    while named is None and time.perf_counter() - began < 600:
        verdict = dumps.verdict(args.ranks)
        if verdict is not None and CULPRIT % args.ranks in verdict.culprits:
            named = time.perf_counter()
    after = named - began if named else float("nan")
    print(f"\non demand ({args.ranks} ranks, {args.entries} entries): {asked.summary()} in"
          f" {requested - began:.3f} s; the last dump landed {max(landed) - began:.2f} s after"
          f" the request; rank {CULPRIT % args.ranks} named {after:.1f} s after it"
          " (cold read; in the console, add up to one triage interval, 10 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/ranktop-flight"))
    parser.add_argument("--ranks", type=int, default=512)
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    try:
        reading(args)
        latency()
        on_demand(args)
    finally:
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
