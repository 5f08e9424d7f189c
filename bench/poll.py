"""Poll time against a local Prometheus, next to the raw HTTP time of the same queries.

    .venv/bin/python bench/poll.py            # 512 and 4,096 ranks, ~1 minute
    .venv/bin/python bench/poll.py --nodes 64

Starts `ranktop simulate` and a Prometheus scraping it, then times, alternately in one run:
- ranktop's poll (PrometheusSource.poll_now: every query, the rank join, the frame);
- the same queries sent with httpx and decoded with json, nothing else.
The ratio of the medians is the figure (goal: at most 1.3x). Needs Debian's prometheus.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ranktop.tui.settings.config import load_settings  # noqa: E402
from ranktop.tui.sources.prometheus import PrometheusSource  # noqa: E402

from tests.integration.cluster import Prometheus, Simulator  # noqa: E402

SCENARIO = ROOT / "config" / "scenario.toml"


def raw_poll(client: httpx.Client, url: str, queries: list[str]) -> None:
    for query in queries:
        answer = client.post(f"{url}/api/v1/query", data={"query": query})
        answer.raise_for_status()
        answer.json()


def measure(nodes: int, rounds: int) -> None:
    simulator = Simulator(SCENARIO, seed=7, nodes=nodes)
    with tempfile.TemporaryDirectory() as folder:
        prometheus = Prometheus(Path(folder), [simulator.port], interval="2s")
        try:
            ranks = nodes * 8
            prometheus.wait_for_series("count(training_step_seconds)", ranks - 8, timeout=120)
            settings = load_settings(overrides={"prometheus": {"url": prometheus.url}},
                                     environ={})
            source = PrometheusSource(settings)
            queries = list(source.queries().values())
            ours, raw = [], []
            with httpx.Client(timeout=30) as client:
                source.poll_now()  # learn the ranks
                raw_poll(client, prometheus.url, queries)
                for _ in range(rounds):
                    started = time.perf_counter()
                    source.poll_now()
                    ours.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    raw_poll(client, prometheus.url, queries)
                    raw.append(time.perf_counter() - started)
            report(ranks, len(queries), ours, raw)
        finally:
            prometheus.stop()
            simulator.stop()


def report(ranks: int, n_queries: int, ours: list[float], raw: list[float]) -> None:
    def ms(samples: list[float]) -> str:
        ordered = sorted(samples)
        p90 = ordered[int(0.9 * (len(ordered) - 1))]
        return f"median {statistics.median(samples) * 1000:7.1f} ms  p90 {p90 * 1000:7.1f} ms"

    print(f"== {ranks} ranks, {n_queries} queries per poll")
    print(f"ranktop poll:      {ms(ours)}")
    print(f"raw HTTP + json:   {ms(raw)}")
    print(f"ratio of medians:  {statistics.median(ours) / statistics.median(raw):.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, action="append",
                        help="nodes of 8 GPUs (repeatable; default 64 and 512)")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    for nodes in args.nodes or [64, 512]:
        measure(nodes, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
