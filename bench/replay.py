"""Past moments on the demo's cluster: what replaying one costs, in time and memory.

For each size, a demo job watched 400 s into its scenario is asked for moments as a user
scrubbing would: the rank death's aftermath (first, a fresh replay), the same moment again
(kept), one refresh back, one forward, one minute back, then 100 steps back one refresh
at a time from 350 s (the memory after them, against the memory after the first 50: the
caches are bounded, so it must not grow). Also the late start: a pipeline's first poll
400 s into the scenario, catching up on what came before, against a first poll of a job
just begun.

    .venv/bin/python bench/replay.py [--nodes 64 2048]

The load average is printed: the figures depend on what else runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import time

from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.engine.replay import Replay
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

START = 1_800_000_000.0
WATCHED = 400.0
MOMENT = 200.0  # the hang after rank 455's death


def timed(call) -> tuple[float, object]:
    began = time.perf_counter()
    value = call()
    return (time.perf_counter() - began) * 1000, value


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def scrub(nodes: int) -> None:
    settings = load_settings(environ={})
    step = settings.refresh_seconds
    source = demo_source(DemoSettings(nodes, 8, seed=7), lambda: START + WATCHED,
                         started=START)
    replay = Replay(settings, source)
    at = START + MOMENT
    first, analysis = timed(lambda: replay.at(at))
    kept, _ = timed(lambda: replay.at(at))
    back, _ = timed(lambda: replay.at(at - step))
    forward, _ = timed(lambda: replay.at(at))  # kept: given again
    ahead, _ = timed(lambda: replay.at(at + step))  # on from the last replay
    minute, _ = timed(lambda: replay.at(at - 60.0))
    steps = []
    for n in range(100):  # from 350 s back to 150 s
        steps.append(timed(lambda n=n: replay.at(START + 350.0 - n * step))[0])
        if n == 49:
            after_50 = rss_mb()
    kinds = sorted({a.kind for a in analysis.anomalies})
    print(f"{nodes * 8:>7} ranks: first {first:7.0f} ms  again {kept:5.1f} ms  "
          f"back 1 {back:6.0f} ms  forward (kept) {forward:5.1f} ms  "
          f"ahead 1 {ahead:6.0f} ms  back 1 min {minute:6.0f} ms")
    steps.sort()
    print(f"          100 steps back: median {steps[50]:.0f} ms, p90 {steps[90]:.0f} ms; "
          f"memory after 50 {after_50:.0f} MB, after 100 {rss_mb():.0f} MB "
          f"(peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")
    print(f"          verdicts at {MOMENT:.0f} s: {', '.join(kinds)}")


def late_start(nodes: int) -> None:
    settings = load_settings(environ={})
    times = []
    for into in (0.0, WATCHED):
        source = demo_source(DemoSettings(nodes, 8, seed=7), lambda into=into: START + into,
                             started=START)
        pipeline = Pipeline(settings, source, clock=lambda into=into: START + into)
        times.append(timed(lambda pipeline=pipeline: asyncio.run(pipeline.poll()))[0])
    print(f"          first poll: of a job just begun {times[0]:.0f} ms, "
          f"{WATCHED:.0f} s into it (catching up) {times[1]:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[64, 2048])
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for nodes in args.nodes:
        scrub(nodes)
        late_start(nodes)


if __name__ == "__main__":
    main()
