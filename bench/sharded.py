"""Poll time through a sharded backend against one Prometheus, with both shards up and with
one down, and what ranktop makes of a shard's outage.

    .venv/bin/python bench/sharded.py                        # 4,096 ranks, ~15 min
    .venv/bin/python bench/sharded.py --nodes 64 --outage 60 # 512 ranks, ~3 min

`ranktop simulate` (8 GPUs a node) scraped by a plain Prometheus and by the sharded backend of
tests/integration/sharded.py (two shards each keeping half the nodes, a front reading both
through remote_read): the same scrapes, the same data, every 5 s (three bodies of 20 MB per
scrape at 4,096 ranks on a shared machine). Once both hold every rank:

1. whole: ranktop's poll (PrometheusSource.poll_now) of the plain Prometheus and of the
   front, alternately, ``--polls`` each; wall time, and the ranks answered;
2. a console (the engine's Pipeline, polled every 2 s) watches the front; one shard is
   stopped; the polls until the console's source says "partial";
3. one down: the same alternate polls as in 1;
4. the console goes on polling until ``--outage`` seconds of outage: the anomalies it
   started on the ranks behind the stopped shard, by kind (the goal is none: nothing is
   known of them);
5. the shard started again: the polls until the front answers every rank.
Medians of wall time. The figures depend on the machine and on whatever else runs on it.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from scale_prometheus import stop_simulator  # this script's folder is on the path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ranktop.tui.core.model import Frame  # noqa: E402
from ranktop.tui.engine.pipeline import Pipeline  # noqa: E402
from ranktop.tui.settings.config import load_settings  # noqa: E402
from ranktop.tui.sources.prometheus.ranks import STEP_METRIC  # noqa: E402
from ranktop.tui.sources.prometheus.source import PrometheusSource  # noqa: E402

from tests.integration.cluster import Simulator, scrape_config  # noqa: E402
from tests.integration.sharded import ConfiguredPrometheus, ShardedBackend  # noqa: E402

SCENARIO = ROOT / "tests" / "integration" / "scenario-faults.toml"  # faults that stay put
JOB = "integration-faults"
STEP_METRIC_SERIES = f'training_step_seconds{{training_job="{JOB}"}}'
GPUS = 8
INTERVAL = "5s"
POLL = 2.0  # the console's refresh
STOPPED = 1  # the shard stopped


def source(url: str) -> PrometheusSource:
    # a shared machine may take long to answer at 4,096 ranks: a time-out is no figure
    return PrometheusSource(load_settings(overrides={"prometheus": {
        "url": url, "job": JOB, "timeout_seconds": 300}}, environ={}))


def answered(frame: Frame) -> int:
    return sum(1 for value in frame.values.get(STEP_METRIC, ()) if not math.isnan(value))


def alternate(sources: dict[str, PrometheusSource], polls: int) -> dict[str, dict]:
    """``polls`` of each source, in turn: median wall ms, ranks answered, the last status."""
    walls: dict[str, list[float]] = {name: [] for name in sources}
    seen: dict[str, dict] = {}
    for round_ in range(polls):
        order = list(sources) if round_ % 2 == 0 else list(reversed(sources))
        for name in order:  # each goes first as often: neither always meets a scrape
            began = time.perf_counter()
            frame = sources[name].poll_now()
            walls[name].append(time.perf_counter() - began)
            status = sources[name].status()
            seen[name] = {"answered": answered(frame), "health": status.health.value,
                          "message": status.message}
    for name, taken in walls.items():
        seen[name]["wall_ms"] = statistics.median(taken) * 1000
    return seen


class Console:
    """The engine's pipeline on the front, polled every POLL seconds; it keeps every
    anomaly it started, by (kind, rank), with the moment it started."""

    def __init__(self, url: str) -> None:
        watched = source(url)
        self.pipeline = Pipeline(watched.settings, watched)
        self.started: dict[tuple[str, int | None], float] = {}
        self.polls = 0

    def poll(self) -> tuple[str, ...]:
        """One poll; why the source's answers are partial (() while they are whole)."""
        began = time.monotonic()
        analysis = asyncio.run(self.pipeline.poll())
        self.polls += 1
        for anomaly in analysis.anomalies:
            self.started.setdefault((anomaly.kind, anomaly.rank), time.time())
        time.sleep(max(0.0, POLL - (time.monotonic() - began)))
        return analysis.status.partial

    def started_on(self, ranks: set[int], since: float) -> Counter:
        """The anomalies started on ``ranks`` after ``since``, by kind."""
        return Counter(kind for (kind, rank), at in self.started.items()
                       if rank in ranks and at >= since)


def measure(nodes: int, polls: int, outage: float, folder: Path) -> dict:
    ranks = nodes * GPUS
    simulator = Simulator(SCENARIO, seed=7, nodes=nodes)
    (folder / "plain").mkdir()
    plain = backend = None
    try:
        plain = ConfiguredPrometheus(folder / "plain", scrape_config(
            {"ranktop-simulate": [simulator.port]}, INTERVAL, rules=False))
        backend = ShardedBackend(folder, [simulator.port], INTERVAL)
        waited = 120 + ranks / 20
        plain.wait_for_series(f"count({STEP_METRIC_SERIES})", ranks, waited)
        backend.wait_for_ranks(JOB, ranks, waited)
        return _run(plain, backend, ranks, polls, outage)
    finally:
        for server in (backend, plain):
            if server is not None:
                server.stop()
        stop_simulator(simulator)


def _run(plain: ConfiguredPrometheus, backend: ShardedBackend, ranks: int, polls: int,
         outage: float) -> dict:
    sources = {"one Prometheus": source(plain.url), "front": source(backend.url)}
    for one in sources.values():
        one.poll_now()  # learn the ranks: the queries may change with them
    results = {"ranks": ranks, "whole": alternate(sources, polls)}
    console = Console(backend.url)
    for _ in range(3):
        console.poll()
    behind = backend.ranks_on(STOPPED, JOB)
    results["behind"] = len(behind)
    backend.stop_shard(STOPPED)
    down_at = time.time()
    polls_to_partial = None
    before = console.polls
    while polls_to_partial is None and console.polls - before < 100:
        if console.poll():
            polls_to_partial = console.polls - before
    results["polls_to_partial"] = polls_to_partial
    results["down"] = alternate(sources, polls)
    while time.time() - down_at < outage:
        console.poll()
    results["outage_s"] = time.time() - down_at
    results["verdicts_behind"] = dict(console.started_on(behind, down_at))
    backend.start_shard(STOPPED)
    back = 0
    while True:
        back += 1
        if answered(sources["front"].poll_now()) == ranks or back >= 100:
            break
        time.sleep(POLL)
    results["polls_to_whole"] = back
    return results


def report(results: dict) -> str:
    lines = [f"{results['ranks']:,} ranks; {results['behind']:,} behind the stopped shard",
             "", "| backend | shards | poll wall ms | ranks answered | status |",
             "|---|---|---:|---:|---|"]
    for state in ("whole", "down"):
        for name, seen in results[state].items():
            shards = "both up" if state == "whole" else "one down"
            status = seen["health"] + (f": {seen['message'][:70]}" if seen["message"] else "")
            lines.append(f"| {name} | {shards} | {seen['wall_ms']:.0f} | "
                         f"{seen['answered']:,} | {status} |")
    verdicts = results["verdicts_behind"]
    lines += ["", f"polls from the shard's stop to 'partial': {results['polls_to_partial']}",
              f"anomalies started on the ranks behind it in {results['outage_s']:.0f} s of "
              f"outage: {sum(verdicts.values())} {dict(sorted(verdicts.items()))}",
              f"polls from the shard's return to every rank answered: "
              f"{results['polls_to_whole']}"]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=512, help="8 GPUs each (default 512)")
    parser.add_argument("--polls", type=int, default=7, help="per backend and state")
    parser.add_argument("--outage", type=float, default=600.0,
                        help="seconds the shard stays down (default 600)")
    args = parser.parse_args()
    if shutil.which("prometheus") is None:
        print("sharded: needs prometheus on PATH (Debian: apt-get install prometheus)",
              file=sys.stderr)
        return 2
    if args.nodes < 1 or args.polls < 1 or args.outage < 0:
        print("sharded: --nodes and --polls must be at least 1, --outage at least 0",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
            os.environ[name] = str(Path(folder) / name)
        os.chdir(ROOT)
        print(report(measure(args.nodes, args.polls, args.outage, Path(folder))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
