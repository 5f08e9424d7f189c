"""What one poll asks of a real Prometheus, and what it costs both sides.

    .venv/bin/python bench/asks.py --ranks 512 --polls 10

``ranktop simulate`` and a Prometheus scraping it (``scale_prometheus.serving``); then a
fresh process of its own (so its peak RSS is the poller's alone) polls with ranktop's
``PrometheusSource``, one poll every refresh interval as the console does, and for each poll
records:
- its wall time (poll start to frame);
- the JSON it received (the bodies, inflated) and the number of HTTP requests it sent;
- Prometheus's own time on them, read from Prometheus's /metrics before and after the poll:
  the HTTP handlers' time (``prometheus_http_request_duration_seconds_sum``: evaluation,
  encoding and writing) and the query engine's (``prometheus_engine_query_duration_seconds
  _sum``, every slice), over the query endpoints.
- Prometheus's own account of each query (``stats=all``): its evaluation time and the
  samples it read, the one figure here that the machine's load does not move.
The HTTP and engine times are wall times inside Prometheus, so they grow with the load of
the machine (and the engine's include the evaluation of the alerting rules Prometheus runs
meanwhile). It prints medians and p90s, and the child's peak RSS. ``scale.py --only asks``
runs it per size. The first poll (learning the ranks) is left out of the figures.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import subprocess
import sys
import time

import httpx
import scale_prometheus
from scale_prometheus import ROOT

QUERY_HANDLERS = ('handler="/api/v1/query"', 'handler="/api/v1/query_range"')
_SAMPLE = re.compile(r"^(\w+)(\{[^}]*\})? (\S+)$")
STATS = {"eval_seconds": re.compile(rb'"evalTotalTime":([0-9.e+-]+)'),
         "samples": re.compile(rb'"totalQueryableSamples":([0-9]+)')}


def server_counters(client: httpx.Client, url: str) -> dict[str, float]:
    """Prometheus's own seconds and request counts for the query endpoints, so far."""
    found = {"http_seconds": 0.0, "engine_seconds": 0.0, "requests": 0.0}
    for line in client.get(f"{url}/metrics").text.splitlines():
        sample = _SAMPLE.match(line)
        if sample is None:
            continue
        name, labels, value = sample.group(1), sample.group(2) or "", float(sample.group(3))
        ours = any(handler in labels for handler in QUERY_HANDLERS)
        if name == "prometheus_http_request_duration_seconds_sum" and ours:
            found["http_seconds"] += value
        elif name == "prometheus_http_request_duration_seconds_count" and ours:
            found["requests"] += value
        elif name == "prometheus_engine_query_duration_seconds_sum":
            found["engine_seconds"] += value
    return found


def child(url: str, polls: int, refresh: float) -> int:
    """In a fresh process: poll ``polls`` times, print each poll's figures as JSON."""
    from ranktop.tui.settings.config import load_settings
    from ranktop.tui.sources.prometheus import client as prom_client
    from ranktop.tui.sources.prometheus.source import PrometheusSource

    received = [0]
    stats = {"eval_seconds": 0.0, "samples": 0.0}
    read_body = prom_client.read_body
    freshness = prom_client.PromClient._freshness

    def counted(*args, **kwargs):
        answer = read_body(*args, **kwargs)
        received[0] += len(answer.content)
        for key, pattern in STATS.items():
            found = pattern.search(answer.content)
            stats[key] += float(found.group(1)) if found else 0.0
        return answer

    prom_client.read_body = counted
    # Prometheus's own account of each query (stats=all): its evaluation time and the
    # samples it read; a few hundred bytes more per answer, counted in the JSON too
    prom_client.PromClient._freshness = lambda self: {**freshness(self), "stats": "all"}
    settings = load_settings(overrides={"prometheus": {"url": url, "timeout_seconds": 300}},
                             environ={})
    source = PrometheusSource(settings)
    rows = []
    with httpx.Client(timeout=60) as client:
        source.poll_now()  # learns the ranks
        for _ in range(polls):
            began = time.perf_counter()
            before, received[0] = server_counters(client, url), 0
            stats.update(eval_seconds=0.0, samples=0.0)
            source.poll_now()
            wall = time.perf_counter() - began
            after = server_counters(client, url)
            rows.append({"wall": wall, "json": received[0], **stats,
                         **{k: after[k] - before[k] for k in after}})
            time.sleep(max(0.0, refresh - (time.perf_counter() - began)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"polls": rows, "peak_rss_mb": peak}))
    return 0


def measure(ranks: int, polls: int, refresh: float = 2.0) -> dict:
    """One size: the medians and p90s of ``polls`` polls, and the poller's peak RSS."""
    with scale_prometheus.serving(ranks) as (url, ranks):
        done = subprocess.run([sys.executable, __file__, "--child", url, str(polls),
                               str(refresh)], capture_output=True, text=True, cwd=ROOT,
                              timeout=3600)
    if done.returncode:
        raise RuntimeError(done.stderr.strip().splitlines()[-1:])
    found = json.loads(done.stdout)
    rows = found["polls"]

    def stat(key: str) -> tuple[float, float]:
        values = sorted(row[key] for row in rows)
        return statistics.median(values), values[min(len(values) - 1, int(0.9 * len(values)))]

    return {"ranks": ranks, "polls": len(rows), "peak_rss_mb": found["peak_rss_mb"],
            **{key: stat(key) for key in ("wall", "json", "requests", "http_seconds",
                                          "engine_seconds", "eval_seconds", "samples")}}


def cells(r: dict) -> dict[str, str]:
    """One size's figures as the table's cells, by what they are."""
    def pair(key: str, scale: float, spec: str) -> str:
        med, p90 = r[key]
        return f"{spec.format(med * scale)} / {spec.format(p90 * scale)}"

    return {
        "poll wall, median / p90 (ms)": pair("wall", 1000, "{:,.0f}"),
        "JSON received per poll, median / p90 (MB)": pair("json", 1e-6, "{:.2f}"),
        "HTTP requests per poll, median / p90": pair("requests", 1, "{:.0f}"),
        "Prometheus HTTP time per poll, median / p90 (ms)": pair("http_seconds", 1000,
                                                                  "{:,.0f}"),
        "Prometheus engine time per poll, median / p90 (ms)": pair("engine_seconds", 1000,
                                                                    "{:,.0f}"),
        "Prometheus evaluation (stats=all) per poll, median / p90 (ms)": pair(
            "eval_seconds", 1000, "{:,.0f}"),
        "samples Prometheus read (stats=all) per poll, median / p90": pair(
            "samples", 1, "{:,.0f}"),
        "poller's peak RSS (MB)": f"{r['peak_rss_mb']:,.0f}",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, action="append", help="ranks (repeatable)")
    parser.add_argument("--polls", type=int, default=10)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        url, polls, refresh = args.child
        return child(url, int(polls), float(refresh))
    for ranks in args.ranks or (512,):
        print(ranks, json.dumps(cells(measure(ranks, args.polls)), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
