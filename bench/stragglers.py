"""Straggler and fail-slow verdicts over a simulated day of injected faults, through the
console's own pipeline (simulated cluster -> Analyser), polled every 2 s of simulated time.

    .venv/bin/python bench/stragglers.py [--hours 24] [--nodes 64] [--seed 1]
                                         [--noise 0.02] [--hiccups 0.05]

The day: a fault every ~15 minutes with quiet time between, drawn from config/stragglers.toml's
kinds (a throttling GPU, a slow GPU, a slow pipeline stage, a slow replica with InfiniBand
errors, a slowest rank that moves every step, a whole job slowed) with random ranks and
strengths, on a job of tensor parallel 8, pipeline 4 (``[layout] parallelism = "tp=8,pp=4"``).

Reported: per kind, the seconds from the fault's onset to its verdict confirmed (median and
worst), whether the verdict named the right shape, the precision of every confirmed straggler
and fail-slow verdict (right kind and place while a fault runs), and the recall.

The simulator's healthy job is quiet (compute time varies ±0.6 %). ``--noise`` adds that much
more (a standard deviation, per rank and poll) to every compute and step time, ``--hiccups``
is the chance per poll that one random rank's last step was 10-30 % slower (a page fault, a
slow batch): neither is a fault, and a verdict on them counts against precision.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.core.config_values import LayoutSettings
from ranktop.tui.core.parallelism import fit_world, parse
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.scenario import Fault, Scenario
from ranktop.tui.sources.demo import DemoSource

from tests.tui.conftest import FakeClock

POLL = 2.0
GRACE = 30.0  # a verdict may outlive its fault by this much (the last step's times)
PARALLELISM = "tp=8,pp=4"
KINDS = ("thermal_throttle", "straggler", "stage_imbalance", "replica_slow",
         "data_imbalance", "job_slowdown")
SHAPE_WORDS = {"thermal_throttle": "one GPU", "straggler": "one GPU",
               "stage_imbalance": "imbalanced pipeline stage", "replica_slow": "replica",
               "data_imbalance": "data or sequence-length imbalance",
               "job_slowdown": "the whole job slowed"}
STRENGTH = {"straggler": (1.12, 1.6), "stage_imbalance": (1.15, 1.4),
            "replica_slow": (1.15, 1.4), "data_imbalance": (1.25, 1.5),
            "job_slowdown": (1.12, 1.3)}


def day(hours: float, n: int, seed: int) -> Scenario:
    """Faults one after another, in a shuffled order of kinds, quiet time between."""
    rng = random.Random(seed)
    faults, t, kinds = [], 300.0, []
    end = hours * 3600
    while True:
        duration = rng.uniform(180, 600)
        if t + duration + 120 > end:
            break
        if not kinds:
            kinds = rng.sample(KINDS, len(KINDS))
        effect = kinds.pop()
        params: dict = {}
        if effect in STRENGTH:
            params["factor"] = round(rng.uniform(*STRENGTH[effect]), 2)
        if effect == "stage_imbalance":
            params["stage"] = rng.randrange(4)
        rank = rng.randrange(n) if effect in ("thermal_throttle", "straggler",
                                              "replica_slow") else None
        faults.append(Fault(effect, rank, t, duration, params))
        t += duration + rng.uniform(300, 900)
    return Scenario("simulated-day", end, 1.12, 4194304, tuple(faults), PARALLELISM)


def expected(fault: Fault, n: int) -> tuple[str, int | None]:
    """The verdict a fault should get: its kind and where it is placed."""
    p = fit_world(parse(PARALLELISM), n)
    if fault.effect == "stage_imbalance":
        stage = fault.params["stage"] % p.stages
        return "straggler", min(r for r in range(n) if p.stage(r) == stage)
    if fault.effect == "replica_slow":
        replica = p.replica(fault.rank)
        return "straggler", min(r for r in range(n) if p.replica(r) == replica)
    if fault.effect == "data_imbalance":
        return "straggler", None
    if fault.effect == "job_slowdown":
        return "fail_slow", None
    return "straggler", fault.rank


class Jittered(DemoSource):
    """The simulated cluster with noise and one-step hiccups on top of its frames."""

    def __init__(self, cluster: SimCluster, clock, started: float, noise: float,
                 hiccups: float, seed: int) -> None:
        super().__init__(cluster, clock, started)
        self.noise, self.hiccups, self.rng = noise, hiccups, random.Random(seed)

    def _read(self, t: float):
        frame = super()._read(t)
        if not (self.noise or self.hiccups):
            return frame
        values = dict(frame.values)
        compute = [v * (1 + self.rng.gauss(0, self.noise)) for v in values["compute_time"]]
        step = [v * (1 + self.rng.gauss(0, self.noise / 4)) for v in values["step_time"]]
        if self.rng.random() < self.hiccups:
            compute[self.rng.randrange(len(compute))] *= self.rng.uniform(1.1, 1.3)
        values["compute_time"], values["step_time"] = compute, step
        return replace(frame, values=values)


def run(hours: float, nodes: int, seed: int, noise: float, hiccups: float) -> None:
    began = time.perf_counter()
    n = nodes * 8
    scenario = day(hours, n, seed)
    cluster = SimCluster(nodes, 8, seed, scenario)
    built = time.perf_counter() - began
    start = 1_800_000_000.0
    clock = FakeClock(start)
    settings = replace(load_settings(environ={}),
                       layout=LayoutSettings(parse(PARALLELISM), "node"))
    source = Jittered(cluster, clock, start, noise, hiccups, seed)
    pipeline = Pipeline(settings, source)
    onset = {i: cluster._throttle_onset(f) if f.effect == "thermal_throttle" else f.start
             for i, f in enumerate(scenario.faults)}
    want = {i: expected(f, n) for i, f in enumerate(scenario.faults)}
    confirmed_at: dict[int, float] = {}
    shape_right: dict[int, bool] = {}
    fail_slow_since: dict[int, float] = {}
    episodes: dict[tuple, bool] = {}  # (kind, rank, since) -> explained when confirmed
    own: dict[int, set[float]] = defaultdict(set)  # each fault's verdicts, by their start
    polls = int(scenario.loop_seconds / POLL)
    for step in range(polls):
        clock.now = start + step * POLL
        t = step * POLL
        analysis = asyncio.run(pipeline.poll())
        running = [i for i, f in enumerate(scenario.faults) if f.start <= t < f.end + GRACE]
        allowed = {want[i] for i in running}
        for anomaly in analysis.anomalies:
            if anomaly.kind not in ("straggler", "fail_slow") or not anomaly.confirmed:
                continue
            episode = (anomaly.kind, anomaly.rank, anomaly.since)
            episodes.setdefault(episode, anomaly.key in allowed)
            for i in running:
                if anomaly.key == want[i]:
                    own[i].add(anomaly.since)
                if anomaly.key == want[i] and i not in confirmed_at:
                    confirmed_at[i] = t - onset[i]
                    shape_right[i] = SHAPE_WORDS[scenario.faults[i].effect] in anomaly.summary
                    if anomaly.kind == "fail_slow":
                        fail_slow_since[i] = anomaly.since - start - onset[i]
    took = time.perf_counter() - began
    print(f"noise {noise:.1%} per rank and poll, a one-step hiccup in {hiccups:.0%} of polls")
    restarts = {scenario.faults[i].effect: len(s) - 1 for i, s in own.items() if len(s) > 1}
    report(scenario, confirmed_at, shape_right, fail_slow_since, episodes, n, polls, took,
           built, restarts)


def report(scenario, confirmed_at, shape_right, fail_slow_since, episodes, n, polls, took,
           built, restarts) -> None:
    print(f"a simulated {scenario.loop_seconds / 3600:g} h day, {n} ranks ({PARALLELISM}), "
          f"{len(scenario.faults)} injected faults, {polls} polls every {POLL:g} s "
          f"({took:.0f} s to run, {built:.0f} s of it building the simulator)")
    print("seconds from onset to the verdict confirmed (median / worst), found, right shape:")
    by_kind: dict[str, list[int]] = defaultdict(list)
    for index, fault in enumerate(scenario.faults):
        by_kind[fault.effect].append(index)
    for kind in KINDS:
        indices = by_kind.get(kind, [])
        found = [confirmed_at[i] for i in indices if i in confirmed_at]
        shaped = sum(shape_right.get(i, False) for i in indices)
        timing = f"{median(found):5.0f} / {max(found):4.0f}" if found else "  never     "
        print(f"  {kind:<17} {timing}   {len(found):>2}/{len(indices):<2}   shape "
              f"{shaped}/{len(indices)}")
    lags = sorted(fail_slow_since.values())
    if lags:
        print(f"fail-slow: the change point it reports lies {median(lags):+.0f} s from the "
              f"true onset (median; {min(lags):+.0f} .. {max(lags):+.0f})")
    stragglers = [ok for (kind, _, _), ok in episodes.items() if kind == "straggler"]
    slow = [ok for (kind, _, _), ok in episodes.items() if kind == "fail_slow"]
    for name, outcomes in (("straggler", stragglers), ("fail-slow", slow)):
        right = sum(outcomes)
        precision = right / len(outcomes) if outcomes else float("nan")
        print(f"{name} verdicts confirmed: {len(outcomes)}, right {right}, precision "
              f"{precision:.3f}")
    print(f"verdicts that ended and came back while their fault ran: "
          f"{sum(restarts.values())} {restarts or ''}")
    wrong = [e for e, ok in episodes.items() if not ok]
    if wrong:
        print(f"wrong verdicts (kind, rank, since): {wrong[:10]}")
    recall = len(confirmed_at) / len(scenario.faults) if scenario.faults else float("nan")
    print(f"recall: {len(confirmed_at)}/{len(scenario.faults)} faults confirmed ({recall:.3f})")


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=24)
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--noise", type=float, default=0.0)
    parser.add_argument("--hiccups", type=float, default=0.0)
    args = parser.parse_args()
    run(args.hours, args.nodes, args.seed, args.noise, args.hiccups)
    return 0


if __name__ == "__main__":
    sys.exit(main())
