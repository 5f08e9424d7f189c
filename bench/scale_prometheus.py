"""A poll at scale against a real Prometheus: ranktop's poll beside the raw HTTP + JSON time
of the same queries, what it asks of Prometheus, and how long the UI thread could stall.

    .venv/bin/python bench/scale_prometheus.py                  # 512, 4,096, 16,384 ranks
    .venv/bin/python bench/scale_prometheus.py --ranks 512 --polls 5

For each size: `ranktop simulate` (8 GPUs a node) and a Debian `prometheus` scraping it, the
scrape interval sized to the body (1 s up to 1,024 ranks, 2 s up to 4,096, 5 s beyond). Once
Prometheus holds every rank, one warm-up poll learns the ranks; then, alternately in one run:
- ranktop's poll (PrometheusSource.poll_now: every query, decoding, the rank join, the
  frame), its wall and CPU time (the polling thread's own), then the analysis of its frame;
- the same queries sent with httpx (same default headers: gzip accepted) and decoded with
  the standard json module, nothing else.
Medians; ratios are of medians taken in the same run. Meanwhile a thread wakes every 5 ms
and records how late it woke: the longest delay during ranktop's polls is how long a UI
thread could have been kept from running by the poll holding the GIL.
Bytes: the JSON the queries return (decoded) and what came over the wire (gzip).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ranktop.tui.core.analysis import Analyser  # noqa: E402
from ranktop.tui.settings.config import load_settings  # noqa: E402
from ranktop.tui.sources.prometheus.source import PrometheusSource  # noqa: E402

from tests.integration.cluster import Prometheus, Simulator  # noqa: E402

SCENARIO = ROOT / "config" / "scenario.toml"
GPUS = 8
SIZES = (512, 4096, 16384)
TICK = 0.005  # the stall probe's sleep


def scrape_interval(ranks: int) -> str:
    """Long enough that Prometheus has scraped one whole body before the next."""
    return "1s" if ranks <= 1024 else "2s" if ranks <= 4096 else "5s"


class StallProbe:
    """A thread that sleeps TICK at a time and keeps its longest oversleep while armed."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.armed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            began = time.perf_counter()
            time.sleep(TICK)
            late = time.perf_counter() - began - TICK
            if self.armed:
                self.worst = max(self.worst, late)

    def take(self) -> float:
        worst, self.worst = self.worst, 0.0
        return worst

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def raw_poll(client: httpx.Client, url: str, queries: list[str]) -> tuple[int, int]:
    """Every query sent and decoded, nothing else; the JSON and the wire bytes."""
    body = wire = 0
    for query in queries:
        answer = client.post(f"{url}/api/v1/query", data={"query": query})
        answer.raise_for_status()
        json.loads(answer.content)
        body += len(answer.content)
        wire += answer.num_bytes_downloaded
    return body, wire


def timed(action) -> tuple[float, float, object]:
    """Wall and CPU (this thread's) seconds of ``action()``, and what it returned."""
    wall, cpu = time.perf_counter(), time.thread_time()
    result = action()
    return time.perf_counter() - wall, time.thread_time() - cpu, result


def measure(ranks: int, polls: int) -> dict:
    """One size: start the simulator and Prometheus, poll ``polls`` times each way."""
    with serving(ranks) as (url, ranks):
        return _polls(url, ranks, polls)


@contextlib.contextmanager
def serving(ranks: int):
    """``ranktop simulate`` and a Prometheus scraping it, once Prometheus holds every rank:
    yields Prometheus's URL and the ranks (whole nodes of GPUS)."""
    nodes = max(1, math.ceil(ranks / GPUS))
    ranks = nodes * GPUS
    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(ROOT), \
            _environ("XDG_CONFIG_HOME", folder):
        simulator = Simulator(SCENARIO, seed=7, nodes=nodes)
        try:
            prometheus = Prometheus(Path(folder), [simulator.port],
                                    interval=scrape_interval(ranks))
            try:
                for metric in ("training_step_seconds", "DCGM_FI_DEV_GPU_TEMP"):
                    prometheus.wait_for_series(f"count({metric})", ranks,
                                               timeout=60 + ranks / 100)
                yield prometheus.url, ranks
            finally:
                prometheus.stop()
        finally:
            stop_simulator(simulator)


def stop_simulator(simulator: Simulator) -> None:
    """Stopped, however long its last scrape takes to render on a loaded machine."""
    simulator.process.terminate()
    try:
        simulator.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        simulator.process.kill()
        simulator.process.wait()


def _polls(url: str, ranks: int, polls: int) -> dict:
    # a shared machine may take long to answer at 16k: a time-out is no figure
    settings = load_settings(overrides={"prometheus": {"url": url, "timeout_seconds": 300}},
                             environ={})
    source = PrometheusSource(settings)
    analyser = Analyser(settings, source.job_name)
    probe = StallProbe()
    ours: dict[str, list[float]] = {"wall": [], "cpu": [], "analysis": [], "stall": []}
    raw: dict[str, list[float]] = {"wall": [], "cpu": []}
    sizes = (0, 0)
    try:
        with httpx.Client(timeout=300) as client:
            source.poll_now()  # learn the ranks: the queries may change with them
            queries = list(source.queries().values())
            raw_poll(client, url, queries)
            for round_ in range(polls):
                if round_ % 2:  # each goes first as often: neither always meets a scrape
                    sizes = _raw(client, url, queries, raw)
                probe.take()
                probe.armed = True
                wall, cpu, frame = timed(source.poll_now)
                probe.armed = False
                ours["wall"].append(wall)
                ours["cpu"].append(cpu)
                ours["stall"].append(probe.take())
                took, _, _ = timed(lambda f=frame: analyser.analyse(
                    f, source.status(), source.rank_map))
                ours["analysis"].append(took)
                if not round_ % 2:
                    sizes = _raw(client, url, queries, raw)
    finally:
        probe.stop()
    med = {f"{k}": statistics.median(v) * 1000 for k, v in ours.items()}
    raw_wall, raw_cpu = (statistics.median(raw[k]) * 1000 for k in ("wall", "cpu"))
    return {
        "ranks": ranks, "polls": polls, "queries": len(source.queries()),
        "mapped_ranks": len(source.rank_map),
        "poll_wall_ms": med["wall"], "poll_cpu_ms": med["cpu"],
        "raw_wall_ms": raw_wall, "raw_cpu_ms": raw_cpu,
        "wall_ratio": med["wall"] / raw_wall, "cpu_ratio": med["cpu"] / raw_cpu,
        "json_bytes": sizes[0], "wire_bytes": sizes[1],
        "analysis_ms": med["analysis"], "ui_stall_ms": med["stall"],
        "ui_stall_max_ms": max(ours["stall"]) * 1000,
    }


def _raw(client: httpx.Client, url: str, queries: list[str], raw: dict[str, list[float]]
         ) -> tuple[int, int]:
    wall, cpu, sizes = timed(lambda: raw_poll(client, url, queries))
    raw["wall"].append(wall)
    raw["cpu"].append(cpu)
    return sizes


@contextlib.contextmanager
def _environ(name: str, value: str):
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


COLUMNS = (("ranks", "ranks", "{:,}"), ("queries", "queries", "{}"),
           ("poll_wall_ms", "poll wall ms", "{:.0f}"), ("raw_wall_ms", "raw wall ms", "{:.0f}"),
           ("wall_ratio", "wall x", "{:.2f}"), ("poll_cpu_ms", "poll CPU ms", "{:.0f}"),
           ("raw_cpu_ms", "raw CPU ms", "{:.0f}"), ("cpu_ratio", "CPU x", "{:.2f}"),
           ("json_bytes", "JSON MB", "{:.2f}"), ("wire_bytes", "wire MB", "{:.2f}"),
           ("analysis_ms", "analysis ms", "{:.0f}"), ("ui_stall_ms", "stall ms", "{:.0f}"),
           ("ui_stall_max_ms", "stall max ms", "{:.0f}"))


def table(rows: list[dict]) -> str:
    """The results as a Markdown table."""
    def cell(row: dict, key: str, spec: str) -> str:
        value = row[key] / 1e6 if key.endswith("_bytes") else row[key]
        return spec.format(value)

    lines = ["| " + " | ".join(title for _, title, _ in COLUMNS) + " |",
             "|" + "|".join("---:" for _ in COLUMNS) + "|"]
    lines += ["| " + " | ".join(cell(row, key, spec) for key, _, spec in COLUMNS) + " |"
              for row in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, action="append",
                        help="ranks (repeatable; default 512, 4096 and 16384)")
    parser.add_argument("--polls", type=int, default=7)
    args = parser.parse_args()
    if shutil.which("prometheus") is None:
        print("scale_prometheus: needs prometheus on PATH (Debian: apt-get install "
              "prometheus)", file=sys.stderr)
        return 2
    if args.polls < 1 or any(r < 1 for r in args.ranks or []):
        print("scale_prometheus: --ranks and --polls must be at least 1", file=sys.stderr)
        return 2
    rows = []
    for ranks in args.ranks or SIZES:
        rows.append(measure(ranks, args.polls))
        print(f"{ranks} ranks done", file=sys.stderr, flush=True)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
