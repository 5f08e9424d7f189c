"""Goodput as ranktop measures it against the simulator's ground truth, loop after loop of
a scenario, through the console's own pipeline (simulated cluster -> Analyser), polled
every 2 s of simulated time.

    .venv/bin/python bench/goodput.py [--loops 13] [--nodes 64] [--poll 2] [--seed 0]
                                      [--others] [--day HOURS]

The scenario is the demo's (config/scenario.toml); ``--others``: faults the demo has not
(a whole job slowed, a collective hang, data imbalance), on a ten-minute loop; a caller may
hand ``run`` any other (a simulated day). Reported, at the end of each loop: ranktop's
goodput over that loop and over the last hour (what it has of it) against the truth over
the same window, and the seconds lost by cause over the last hour, both ways. ``--day
HOURS``: a simulated day of faults (``bench/day.py``), compared hour by hour. The goal:
within +-2 percentage points.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.core.detect.goodput import CAUSES, HOUR_SECONDS, Goodput
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.goodput_truth import GoodputTruth
from ranktop.tui.simulator.scenario import Fault, Scenario, load_scenario
from ranktop.tui.sources.demo import DemoSource

from bench.day import day_scenario
from tests.tui.conftest import START, FakeClock

GOAL_POINTS = 2.0
OTHERS = Scenario("other-faults", 600, 1.12, 4194304, (
    Fault("job_slowdown", None, 60, 140, {"factor": 1.2}),
    Fault("collective_hang", 3, 250, 50, {"cause": "missing", "dumps": "none"}),
    Fault("data_imbalance", None, 350, 100, {"factor": 1.5}),
    Fault("job_stall", None, 500, 30, {}),
    Fault("straggler", 9, 540, 50, {"factor": 1.3}),
))


@dataclass(frozen=True)
class Window:
    """One window's goodput, measured and true, in percentage points, and its lost
    seconds by cause over the last hour, measured and true."""

    start: float
    end: float
    measured: float
    truth: float
    hour_measured: float
    hour_truth: float
    lost_measured: dict[str, float]
    lost_truth: dict[str, float]

    @property
    def error(self) -> float:
        return max(abs(self.measured - self.truth), abs(self.hour_measured - self.hour_truth))


def run(scenario: Scenario, seconds: float, window: float, nodes: int = 64,
        gpus: int = 8, poll: float = 2.0, seed: int = 0) -> list[Window]:
    """``scenario`` polled every ``poll`` seconds for ``seconds``, compared with the truth
    every ``window`` seconds."""
    cluster = SimCluster(nodes, gpus, seed, scenario)
    truth = GoodputTruth(cluster)
    clock = FakeClock(START)
    pipeline = Pipeline(load_settings(environ={}), DemoSource(cluster, clock, START),
                        clock=clock)
    windows, last = [], None
    t, due = 0.0, window
    while t <= seconds:
        goodput = asyncio.run(pipeline.poll()).goodput
        if t >= due:
            windows.append(_compare(truth, last, goodput, t))
            last, due = (t, goodput), due + window
        t += poll
        clock.now = START + t
    return windows


def _compare(truth: GoodputTruth, last: tuple[float, Goodput] | None, now: Goodput,
             t: float) -> Window:
    """The window since ``last`` (or since the start): ranktop's share over it, from its
    since-start figures, and the truth over it."""
    start, made_before = (0.0, 0.0) if last is None else (
        last[0], last[1].since_start * last[1].watched)
    measured = (now.since_start * now.watched - made_before) / (now.watched - (
        0.0 if last is None else last[1].watched))
    hour = truth.over(max(0.0, t - min(HOUR_SECONDS, now.covered)), t)
    return Window(start, t, 100 * measured, 100 * truth.over(start, t).share,
                  100 * now.hour, 100 * hour.share, dict(now.lost), dict(hour.lost))


def report(windows: list[Window]) -> str:
    lines = [f"{'window (s)':>14}  {'ranktop':>8}  {'truth':>6}  {'hour':>6}  {'truth':>6}  "
             "lost in the hour, s (ranktop / truth)"]
    for w in windows:
        lost = "  ".join(f"{c} {w.lost_measured.get(c, 0):.0f}/{w.lost_truth.get(c, 0):.0f}"
                         for c in CAUSES if w.lost_measured.get(c) or w.lost_truth.get(c))
        lines.append(f"{w.start:>6.0f}-{w.end:<7.0f}  {w.measured:>7.1f}%  {w.truth:>5.1f}%  "
                     f"{w.hour_measured:>5.1f}%  {w.hour_truth:>5.1f}%  {lost}")
    worst = max((w.error for w in windows), default=float("nan"))
    verdict = "within" if worst <= GOAL_POINTS else "OUTSIDE"
    lines.append(f"worst error {worst:.2f} percentage points: {verdict} the goal of "
                 f"+-{GOAL_POINTS:.0f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=13)
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--poll", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--others", action="store_true", help="faults the demo has not")
    parser.add_argument("--day", type=float, metavar="HOURS",
                        help="a simulated day of faults (bench/day.py), this many hours")
    args = parser.parse_args()
    if args.day:
        scenario, _ = day_scenario(args.seed, args.nodes * 8, args.day)
        windows = run(scenario, args.day * HOUR_SECONDS, HOUR_SECONDS, args.nodes,
                      poll=args.poll, seed=args.seed)
        print(report(windows))
        return
    scenario = OTHERS if args.others else load_scenario()
    windows = run(scenario, args.loops * scenario.loop_seconds, scenario.loop_seconds,
                  args.nodes, poll=args.poll, seed=args.seed)
    print(report(windows))


if __name__ == "__main__":
    main()
