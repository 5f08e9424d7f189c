"""The jobs list at fleet scale: 1,000 jobs on 100,000 GPUs against Debian's Prometheus.

Job sizes are heavy-tailed (24 to 6,528 GPUs, a Pareto draw scaled to the total); every
10th job is stalled (its step counter stands still). A fast exporter (four processes, each a
quarter of the jobs) serves per rank what the list reads: the step counter, step and compute
seconds, and DCGM's temperature by GPU UUID, 400,000 series in all (no XID series: as
dcgm-exporter, the simulator serves one only where an XID happened, and the shipped alert on
a new XID series would page every job of a Prometheus that just started). One Prometheus
scrapes them with ``ranktop rules --jobs`` loaded, and the list is read from the raw series
and from the recorded ones. Then one healthy job's counter is stopped, and the list is read
every 5 s until that job is listed stalled above every healthy job: the detection latency.
Last, the RSS of the console holding the list of 1,000 jobs.

Prometheus holds only the minutes this script ran, not an hour: the hour-long figures
(ranks seen, goodput) cost more on a backend that holds the whole hour.

    .venv/bin/python bench/fleet.py              # ~7 min; needs Debian's prometheus
    .venv/bin/python bench/fleet.py --jobs 100 --gpus 10000 --warm 130   # ~4 min
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ranktop.tui.core.fleet import Verdict, ranked  # noqa: E402
from ranktop.tui.settings.config import load_settings  # noqa: E402
from ranktop.tui.sources.prometheus.fleet import FleetReader, fleet_rules_yaml  # noqa: E402

from tests.integration.cluster import Prometheus, free_port  # noqa: E402

SMALLEST, LARGEST, GPUS_PER_NODE = 24, 6528, 8
SHARDS = 4
STEP_SECONDS = 1.1
STALLED_EVERY = 10


def job_sizes(jobs: int, gpus: int, seed: int = 7) -> list[int]:
    """Heavy-tailed sizes from SMALLEST to LARGEST, whole nodes, summing to about ``gpus``."""
    draw = random.Random(seed)
    raw = [draw.paretovariate(1.1) for _ in range(jobs)]
    scale = gpus / sum(raw)
    for _ in range(30):  # clipping moves the sum: rescale until it holds
        sizes = [min(LARGEST, max(SMALLEST, r * scale)) for r in raw]
        scale *= gpus / sum(sizes)
    return [max(SMALLEST, round(s / GPUS_PER_NODE) * GPUS_PER_NODE) for s in sizes]


def _series(jobs: list[tuple[int, int]]) -> list[tuple[int, str, str, str]]:
    """For each rank: its job's index, and its two label sets (the job's, DCGM's)."""
    out = []
    for index, size in jobs:
        name = f"job-{index:04d}"
        for rank in range(size):
            uuid = f"GPU-{index:04d}-{rank:05d}"
            host = f"n{index:04d}-{rank // GPUS_PER_NODE:04d}"
            job = f'training_job="{name}",rank="{rank}",gpu_uuid="{uuid}",hostname="{host}"'
            dcgm = f'gpu="{rank % GPUS_PER_NODE}",UUID="{uuid}",Hostname="{host}"'
            out.append((index, job, dcgm))
    return out


def serve_shard(port: int, jobs: list[tuple[int, int]], began: float, frozen, frozen_at
                ) -> None:
    """One exporter process: a quarter of the fleet, rendered at each scrape."""
    series = _series(jobs)

    def step(index: int, now: float) -> int:
        if index % STALLED_EVERY == 0:
            return 1000
        if index == frozen.value:
            now = min(now, frozen_at.value)
        return 1000 + int((now - began) / STEP_SECONDS)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            now = time.time()
            steps = {index: step(index, now) for index, _ in jobs}
            lines = []
            for index, job, dcgm in series:
                lines.append(f"training_step{{{job}}} {steps[index]}\n"
                             f"training_step_seconds{{{job}}} 1.1\n"
                             f"training_compute_seconds{{{job}}} 0.9\n"
                             f"DCGM_FI_DEV_GPU_TEMP{{{dcgm}}} 61\n")
            body = "".join(lines).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def reads(reader: FleetReader, recorded: bool, count: int) -> dict:
    """``count`` refreshes from the raw series or the recorded ones: seconds and bytes."""
    seconds, sizes = [], []
    for _ in range(count):
        reader._refreshes = 1  # the rules are not looked for again: the mode is forced
        reader.recorded = recorded
        started = time.perf_counter()
        read = reader.read()
        seconds.append(time.perf_counter() - started)
        sizes.append(read.bytes)
        assert not read.errors, read.errors
    return {"median_s": statistics.median(seconds), "max_s": max(seconds),
            "bytes": statistics.median(sizes), "queries": read.queries, "jobs": len(read.jobs)}


def ids_cost(reader: FleetReader) -> float:
    started = time.perf_counter()
    reader.job_ids()
    return time.perf_counter() - started


def stall_latency(reader: FleetReader, frozen, frozen_at, job: int, jobs: int) -> dict:
    """Stop ``job``'s counter now; read every 5 s until it is listed stalled above every
    healthy job. Also counts the healthy jobs ever flagged meanwhile."""
    frozen_at.value = time.time()
    frozen.value = job
    name = f"job-{job:04d}"
    flagged: dict[str, str] = {}
    while True:
        time.sleep(5)
        rows = ranked(reader.read().jobs, time.time(), reader.limits)
        names = [row.facts.name for row in rows]
        flagged |= {row.facts.name: row.worst for row in rows if not row.healthy
                    and int(row.facts.name[4:]) % STALLED_EVERY and row.facts.name != name}
        first_healthy = next((i for i, row in enumerate(rows) if row.healthy), len(rows))
        if name in names and rows[names.index(name)].verdict is Verdict.STALLED \
                and names.index(name) < first_healthy:
            stalled = sum(row.verdict is Verdict.STALLED for row in rows)
            return {"latency_s": time.time() - frozen_at.value, "stalled_listed": stalled,
                    "stalled_expected": len(range(0, jobs, STALLED_EVERY)) + 1,
                    "healthy_flagged": len(flagged), "flagged_for": sorted(set(flagged.values()))}


LIST_RSS = """
import asyncio, resource, sys
sys.path.insert(0, {root!r})
from ranktop.tui.app.fleet import FleetApp
from ranktop.tui.engine.fleet import FleetEngine
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.source import PrometheusSource
settings = load_settings(overrides={{"prometheus": {{"url": {url!r}}}}}, environ={{}})
async def main():
    app = FleetApp(settings, FleetEngine(settings), lambda s: None,
                   ThreadEngine(settings, PrometheusSource(settings)))
    async with app.run_test(size=(160, 50)) as pilot:
        while len(app.jobs.snapshot.rows) < {jobs}:
            await pilot.pause(0.2)
        await pilot.pause(1)
asyncio.run(main())
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def list_rss(url: str, jobs: int) -> float:
    """The peak RSS (MB) of a console showing the list of every job."""
    code = LIST_RSS.format(root=str(ROOT), url=url, jobs=jobs)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=True)
    return int(done.stdout.split()[-1]) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=100_000)
    parser.add_argument("--interval", default="15s", help="scrape and rule interval")
    parser.add_argument("--warm", type=float, default=150.0,
                        help="seconds scraped before measuring (past the 2 min window)")
    parser.add_argument("--refreshes", type=int, default=5)
    args = parser.parse_args()

    sizes = job_sizes(args.jobs, args.gpus)
    print(f"{args.jobs} jobs, {sum(sizes):,} GPUs (sizes {min(sizes)}..{max(sizes)}, "
          f"median {statistics.median(sizes):.0f}); every {STALLED_EVERY}th stalled",
          flush=True)
    frozen, frozen_at = multiprocessing.Value("i", -1), multiprocessing.Value("d", 0.0)
    began = time.time()
    ports = [free_port() for _ in range(SHARDS)]
    shards = [multiprocessing.Process(
        target=serve_shard, daemon=True,
        args=(port, [(i, s) for i, s in enumerate(sizes) if i % SHARDS == shard], began,
              frozen, frozen_at))
        for shard, port in enumerate(ports)]
    for shard in shards:
        shard.start()
    with tempfile.TemporaryDirectory(prefix="ranktop-fleet-bench-") as folder:
        settings = load_settings(environ={})
        rules = Path(folder) / "fleet-rules.yml"
        rules.write_text(fleet_rules_yaml(settings))
        server = Prometheus(Path(folder), ports, interval=args.interval)
        server.stop()
        config = Path(folder) / "prometheus.yml"
        config.write_text(config.read_text().replace("rule_files: [",
                                                     f"rule_files: ['{rules}', "))
        server.start()
        try:
            settings = load_settings(overrides={"prometheus": {"url": server.url,
                                                               "timeout_seconds": 60}},
                                     environ={})
            reader = FleetReader(settings)
            time.sleep(args.warm)
            raw = reads(reader, False, args.refreshes)
            recorded = reads(reader, True, args.refreshes)
            print(f"job ids (label values): {1000 * ids_cost(reader):.1f} ms", flush=True)
            for label, figures in (("raw series", raw), ("recording rules", recorded)):
                print(f"refresh from the {label}: median {figures['median_s']:.2f} s, "
                      f"max {figures['max_s']:.2f} s, {figures['bytes'] / 1e6:.3f} MB, "
                      f"{figures['queries']} queries, {figures['jobs']} jobs", flush=True)
            reader._refreshes, reader.recorded = 1, True
            stall = stall_latency(reader, frozen, frozen_at, 1, args.jobs)
            print(f"stall detected after {stall['latency_s']:.0f} s (window 120 s, scrape "
                  f"{args.interval}); stalled listed {stall['stalled_listed']} of "
                  f"{stall['stalled_expected']}; healthy flagged {stall['healthy_flagged']} "
                  f"{stall['flagged_for'][:3]}",
                  flush=True)
            print(f"console RSS with the list of {args.jobs} jobs: "
                  f"{list_rss(server.url, args.jobs):.0f} MB", flush=True)
            print(f"bench RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}"
                  " MB", flush=True)
        finally:
            server.stop()
            for shard in shards:
                shard.terminate()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
