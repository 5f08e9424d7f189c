"""The advice over a simulated day of faults and over the demo's loop, judged against the
ground truth (``bench/day.py``): for every fault of the GPU, whether the drain or reset
named its node (a reset: its GPU) and no other; for every other fault, that no drain or
reset appeared; and how many polls after the anomaly was confirmed its action was on
screen (the goal: at most one).

    .venv/bin/python bench/advice_day.py [--hours 24] [--ranks 64] [--seed 1]
                                         [--demo-nodes 64] [--demo-laps 4]

Polls every 2 s of simulated time: the simulated cluster's frames through the console's
Analyser, as its poll worker hands them over. No logs are written and no hang triage runs
(it reads them, and would cost minutes over a day): a hang is judged from the metrics
alone, its culprit unnamed.

A drain or reset stands for a while after its fault: the hardware ledger judges counters
by their rise over the last 10 minutes, and a failed row remap stays failed. A hardware
action is right while some fault of the GPU on that node (and GPU, for a reset) is that
recent; any other is wrong, and counts against every fault running then.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.core.advice.advise import DRAIN, Action
from ranktop.tui.core.analysis import Analyser, Analysis
from ranktop.tui.core.detect.hardware import SNAPSHOT_SECONDS, WINDOW_SECONDS
from ranktop.tui.core.model import Health, RankMap, SourceStatus
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster, host_names
from ranktop.tui.simulator.scenario import Scenario, load_scenario

from bench.day import Truth, day_scenario, truth_of

POLL = 2.0
GRACE = 30.0  # an anomaly may outlive its fault by this much (its last samples)
STANDS = WINDOW_SECONDS + SNAPSHOT_SECONDS + 2 * POLL  # a counter's rise, in the ledger
START = 1_800_000_000.0


@dataclass
class Judged:
    """What happened to one fault."""

    truth: Truth
    confirmed: float | None = None  # seconds into the scenario
    acted: float | None = None  # its action first on screen (for a GPU fault: on its node)
    kinds: set[str] = field(default_factory=set)  # the hardware actions on its node
    wrong: list[str] = field(default_factory=list)  # hardware actions it must not have had

    @property
    def right(self) -> bool:
        found = self.acted is not None or not self.truth.hardware
        return found and not self.wrong

    @property
    def after_onset(self) -> float | None:
        """Seconds from the fault's start to its action on screen."""
        return None if self.acted is None else self.acted - self.truth.fault.start

    @property
    def delay_polls(self) -> float | None:
        if self.confirmed is None or self.acted is None:
            return None
        return max(0.0, self.acted - self.confirmed) / POLL


class Judge:
    """Judges each poll's actions against the truths, fault by fault."""

    def __init__(self, truths: Sequence[Truth], rank_map: RankMap, end: float) -> None:
        self.judged = [Judged(truth) for truth in truths]
        self.rank_map = rank_map
        self.end = end
        self.stray: list[str] = []  # wrong hardware actions while no fault ran

    def see(self, t: float, analysis: Analysis) -> None:
        running = [j for j in self.judged
                   if j.truth.fault.start <= t <= j.truth.fault.end + GRACE]
        for action in analysis.actions:
            if action.hardware:
                self._hardware(t, action, running)
        for judged in running:
            self._timing(t, judged, analysis)

    def _hardware(self, t: float, action: Action, running: list[Judged]) -> None:
        mine = [j for j in self.judged if j.truth.hardware and self._stands(j, t)
                and _on(action, j.truth)]
        for judged in mine:
            judged.kinds.add(action.kind)
        if mine:
            return
        said = f"{t:.0f} s: {action.text}"
        for judged in running:
            if said not in judged.wrong:
                judged.wrong.append(said)
        if not running and said not in self.stray:
            self.stray.append(said)

    def _stands(self, judged: Judged, t: float) -> bool:
        fault = judged.truth.fault
        latched = fault.params.get("remap_failure", False)
        return fault.start <= t <= (self.end if latched else fault.end + STANDS)

    def _timing(self, t: float, judged: Judged, analysis: Analysis) -> None:
        if judged.confirmed is None and any(
                a.confirmed and self._about(a.rank, judged.truth) for a in analysis.anomalies):
            judged.confirmed = t
        if judged.acted is None and any(self._acts_on(a, judged.truth)
                                        for a in analysis.actions):
            judged.acted = t

    def _acts_on(self, action: Action, truth: Truth) -> bool:
        if truth.hardware:
            return action.hardware and _on(action, truth)
        return self._about(action.rank, truth) or bool(action.node and action.node == truth.node)

    def _about(self, rank: int | None, truth: Truth) -> bool:
        """About the fault: on its node, or about the whole job (for a fault of the GPU,
        only on its node)."""
        if truth.node is None or (rank is None and not truth.hardware):
            return True
        if rank is None:
            return False
        return 0 <= rank < len(self.rank_map.ranks) and (
            self.rank_map.ranks[rank].host == truth.node)


def _on(action: Action, truth: Truth) -> bool:
    """The hardware action the truth asks for: on its node (a reset: on its GPU)."""
    return action.node == truth.node and (action.kind == DRAIN or action.gpu == truth.gpu)


def judge_run(scenario: Scenario, truths: Sequence[Truth], nodes: int, gpus: int = 8,
              seed: int = 1) -> Judge:
    """Analyse the scenario's frames every POLL seconds, as the console would, and judge
    each poll."""
    cluster = SimCluster(nodes, gpus, seed, scenario)
    analyser = Analyser(load_settings(environ={}), cluster.job_name)
    judge = Judge(truths, cluster.rank_map, scenario.loop_seconds)
    for poll in range(int(scenario.loop_seconds / POLL)):
        t = poll * POLL
        frame = replace(cluster.frame_at(t), time=START + t)
        status = SourceStatus("simulated", Health.OK, since=START, last_ok=START + t)
        judge.see(t, analyser.analyse(frame, status, cluster.rank_map))
    return judge


def demo_truths(nodes: int, laps: int, gpus: int = 8) -> tuple[Scenario, tuple[Truth, ...]]:
    """The shipped demo scenario, ``laps`` of its loop laid end to end (the counters keep
    counting across laps, as the demo's do), and the truth for its faults."""
    demo = load_scenario()
    hosts, n = host_names(nodes), nodes * gpus
    faults = tuple(replace(f, start=f.start + lap * demo.loop_seconds,
                           rank=None if f.rank is None else f.rank % n)
                   for lap in range(laps) for f in demo.faults)
    scenario = replace(demo, loop_seconds=laps * demo.loop_seconds, faults=faults)
    judged = [f for f in faults if f.effect != "log_rotation"]
    return scenario, tuple(truth_of(f, hosts, gpus) for f in judged)


def report(title: str, judge: Judge, took: float) -> None:
    judged = judge.judged
    hardware = [j for j in judged if j.truth.hardware]
    software = [j for j in judged if not j.truth.hardware]
    print(f"{title}: {len(judged)} faults ({len(hardware)} of the GPU), {took:.0f} s to run")
    by_name: dict[str, list[Judged]] = defaultdict(list)
    for j in judged:
        by_name[j.truth.name].append(j)
    print(f"  {'fault':<28} {'right':>6}  {'action (truth)':<22} {'onset -> action, s':<19}"
          f"confirmed -> action, polls")
    for name, group in sorted(by_name.items()):
        right = sum(j.right for j in group)
        want = group[0].truth.action or "none"
        seen = ",".join(sorted(set().union(*(j.kinds for j in group)))) or "none"
        delays = [d for j in group if (d := j.delay_polls) is not None]
        onsets = [a for j in group if (a := j.after_onset) is not None]
        print(f"  {name:<28} {right:>2}/{len(group):<3}  {seen + ' (' + want + ')':<22} "
              f"{_spread(onsets):<19}{_spread(delays)}")
    wrong_node = [j for j in hardware if not j.right]
    on_software = [j for j in software if j.wrong]
    delays = [d for j in judged if (d := j.delay_polls) is not None]
    late = [j for j in judged if (j.delay_polls or 0) > 1]
    print(f"  GPU faults with the action on their node, and no other: "
          f"{len(hardware) - len(wrong_node)}/{len(hardware)}")
    kinds = sum(j.truth.action in j.kinds for j in hardware)
    print(f"  ... of them with the truth's kind (drain or reset) among their node's actions: "
          f"{kinds}/{len(hardware)}")
    print(f"  other faults with no drain or reset: {len(software) - len(on_software)}/"
          f"{len(software)}")
    if delays:
        print(f"  confirmed -> action: median {statistics.median(delays):.0f} polls, worst "
              f"{max(delays):.0f}; more than 1 poll: {len(late)}")
    for j in [*wrong_node, *on_software, *late][:12]:
        fault = j.truth.fault
        print(f"    {j.truth.name} at {fault.start:.0f} s on {j.truth.node}: acted "
              f"{j.acted}, confirmed {j.confirmed}, wrong {j.wrong[:2]}")
    if judge.stray:
        print(f"  drains or resets while no fault ran: {len(judge.stray)}: {judge.stray[:3]}")


def _spread(values: list[float]) -> str:
    """"median / worst", or "none" for no values."""
    return f"{statistics.median(values):.0f} / {max(values):.0f}" if values else "none"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--demo-nodes", type=int, default=64)
    parser.add_argument("--demo-laps", type=int, default=4)
    args = parser.parse_args(argv)
    began = time.perf_counter()
    scenario, truths = demo_truths(args.demo_nodes, args.demo_laps)
    judge = judge_run(scenario, truths, args.demo_nodes, seed=7)
    report(f"the demo's loop, {args.demo_laps} laps ({args.demo_nodes * 8} ranks)", judge,
           time.perf_counter() - began)
    began = time.perf_counter()
    scenario, truths = day_scenario(args.seed, args.ranks, args.hours)
    judge = judge_run(scenario, truths, args.ranks // 8, seed=args.seed)
    report(f"a simulated {args.hours:g} h day, seed {args.seed}, {args.ranks} ranks", judge,
           time.perf_counter() - began)


if __name__ == "__main__":
    main()
