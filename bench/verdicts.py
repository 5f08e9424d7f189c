"""Verdicts over whole scenario loops, through the console's own pipeline (demo source with
its log files -> Analyser): how many polls each fault takes to show as pending and to be
confirmed, and every verdict that was not true — wrong hang culprits, anomalies no fault
explains, anomalies that flickered (ended and came back while their fault ran).

    .venv/bin/python bench/verdicts.py [--loops 12] [--nodes 64] [--cases-only]

Polls every 2 s of simulated time (frames are computed, logs written as the demo writes
them). 12 loops of the shipped 300 s scenario are one simulated hour. The hang triage runs
in its own worker, as in the console; after each poll the bench waits for it, as if it
finished within the 2 s to the next poll, which then shows its verdict.

Then three hang cases of their own (``hang_cases``): a frozen rank (alive, its log silent,
its GPU idle; no Flight Recorder dumps), the same without GPU metrics, and a dead rank while
the others keep stepping (a step every 6 s): when the culprit is named against the last
watchdog line, whether the culprits are exactly the ground truth, and how often the hang row
left the screen or changed its start while its fault ran (flickers). And the idle-GPU rule
over a simulated healthy hour: how often it suspected a rank (its false positives).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dataclasses import replace

from ranktop.tui.core.hang.frozen import idle_gpus
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.log_writer import WATCHDOG_TIMEOUT_MS, LogWriter
from ranktop.tui.simulator.scenario import Fault, Scenario
from ranktop.tui.sources.demo import DemoSource, demo_source

from tests.tui.conftest import FakeClock

POLL = 2.0
GRACE = 30.0  # an anomaly may outlive its fault by this much (windows, last samples)
FLICKER_GAP = 10.0  # ended and back within this: a flicker


LEDGER_KINDS = ("memory", "remap_failure", "nvlink_errors", "pcie")  # "rose in 10 min"
PRIMARY = {"thermal_throttle": "thermal", "straggler": "straggler", "nvlink_drop": "nvlink",
           "ecc_dbe": "ecc", "xid": "xid", "rank_death": "missing", "job_stall": "job_stall",
           "loss_divergence": "loss"}


def explained(effect: str, rank: int | None, gpus: int) -> set[tuple[str, int | None]]:
    """The (kind, rank) verdicts a fault makes true: its own, and its known consequences."""
    node = None if rank is None else rank - rank % gpus
    node_ranks = [] if node is None else list(range(node, node + gpus))
    table: dict[str, set] = {
        "thermal_throttle": {("thermal", rank), ("straggler", rank)},
        "straggler": {("straggler", rank)},
        "nvlink_drop": {("nvlink", node), *(("nvlink_errors", r) for r in node_ranks),
                        *(("straggler", r) for r in node_ranks)},
        "ecc_dbe": {("ecc", rank), ("memory", rank)},
        "xid": {("xid", rank), ("pcie", rank)},
        "rank_death": {("missing", rank), ("hang", rank), ("hang", None),
                       ("job_stall", None), ("throughput", None)},
        "job_stall": {("job_stall", None), ("throughput", None)},
        "loss_divergence": {("loss", None)},
    }
    return table.get(effect, set())


def run(loops: int, nodes: int) -> None:
    settings = load_settings(environ={})
    start = 1_800_000_000.0
    clock = FakeClock(start)
    with tempfile.TemporaryDirectory() as folder:
        source = demo_source(DemoSettings(nodes, 8, 7), clock, started=start,
                             log_root=Path(folder) / "logs")
        pipeline = Pipeline(settings, source)
        scenario, gpus = source.cluster.scenario, 8
        n = len(source.rank_map)
        faults = [(f.effect, None if f.rank is None else f.rank % n, f.start, f.end)
                  for f in scenario.faults]
        first_pending: dict[int, list[float]] = defaultdict(list)
        first_confirmed: dict[int, list[float]] = defaultdict(list)
        active_since: dict[tuple, float] = {}
        ended_at: dict[tuple, float] = {}
        unexplained: dict[tuple, int] = defaultdict(int)
        wrong_culprits: set[int] = set()
        flickers: dict[tuple, int] = defaultdict(int)
        first_hang: list[float] = []  # when the hang verdict named the dead rank, per loop
        hang_shown: list[float] = []  # when a hang verdict was first on screen, per loop
        hang_sure: list[float] = []  # when it was first confirmed (on the dead rank), per loop
        began = time.perf_counter()
        polls = int(loops * scenario.loop_seconds / POLL)
        for step in range(polls):
            clock.now = start + step * POLL
            analysis = asyncio.run(pipeline.poll())
            if pipeline.triage is not None:
                pipeline.triage.wait(60.0)
            at = (step * POLL) % scenario.loop_seconds
            running = [(i, f) for i, f in enumerate(faults) if f[2] <= at < f[3] + GRACE]
            allowed = set().union(*(explained(f[0], f[1], gpus) for _, f in running))
            allowed |= {key for f in faults if since_fault(step * POLL, f, scenario) is not None
                        for key in explained(f[0], f[1], gpus) if key[0] in LEDGER_KINDS}
            keys = {a.key for a in analysis.anomalies}
            for anomaly in analysis.anomalies:
                key = anomaly.key
                if key not in active_since:
                    if clock.now - ended_at.get(key, -1e9) <= FLICKER_GAP:
                        flickers[key] += 1
                    active_since[key] = clock.now
                if anomaly.confirmed and key not in allowed:
                    unexplained[key] += 1
                if anomaly.kind == "hang" and anomaly.confirmed and anomaly.rank is not None:
                    dead = {f[1] for _, f in running if f[0] == "rank_death"}
                    if anomaly.rank not in dead:
                        wrong_culprits.add(anomaly.rank)
            for key in [k for k in active_since if k not in keys]:
                ended_at[key] = clock.now
                del active_since[key]
            for index, (effect, _rank, fault_start, _end) in enumerate(faults):
                own = {key for key in explained(effect, _rank, gpus) & keys
                       if key[0] == PRIMARY.get(effect)}
                loop = loop_number(step, scenario) + 1
                if effect == "rank_death" and ("hang", _rank) in keys and len(first_hang) < loop:
                    first_hang.append(at - fault_start)
                if effect == "rank_death" and fault_start <= at < fault_start + 120:
                    hang_at = at - fault_start
                    hangs = [a for a in analysis.anomalies if a.kind == "hang"]
                    if hangs and len(hang_shown) < loop:
                        hang_shown.append(hang_at)
                    if any(a.confirmed for a in hangs) and len(hang_sure) < loop:
                        hang_sure.append(hang_at)
                if not own or not fault_start <= at < fault_start + 120:
                    continue
                loop_start = clock.now - at
                pending = [a for a in analysis.anomalies if a.key in own]
                if len(first_pending[index]) < loop_number(step, scenario) + 1:
                    first_pending[index].append(clock.now - loop_start - fault_start)
                if any(a.confirmed for a in pending) and (
                        len(first_confirmed[index]) < loop_number(step, scenario) + 1):
                    first_confirmed[index].append(clock.now - loop_start - fault_start)
        took = time.perf_counter() - began
    report(faults, first_pending, first_confirmed, unexplained, wrong_culprits, flickers,
           loops, n, polls, took)
    if hang_shown:
        sure = f"{median(hang_sure) / POLL + 1:.0f}" if hang_sure else "never"
        shown = median(hang_shown) / POLL + 1
        print(f"the hang verdict after the rank's death: pending {shown:.0f} polls, confirmed "
              f"{sure} polls")
    if first_hang:
        print(f"the hang verdict names the dead rank {median(first_hang):.0f} s after it died "
              f"({median(first_hang) / POLL + 1:.0f} polls; the others' watchdogs fire ~30 s "
              "after the death)")


def since_fault(t: float, fault: tuple, scenario) -> float | None:
    """Seconds since the fault's latest occurrence began, while a ledger still counts it
    (its errors rose within the last 10 minutes); None outside that."""
    loop = scenario.loop_seconds
    start = (t - fault[2]) // loop * loop + fault[2]
    for began in (start, start - loop, start - 2 * loop):
        if 0 <= began <= t and t - began < fault[3] - fault[2] + 600 + GRACE:
            return t - began
    return None


def loop_number(step: int, scenario) -> int:
    return int(step * POLL // scenario.loop_seconds)


def report(faults, first_pending, first_confirmed, unexplained, wrong_culprits, flickers,
           loops, n, polls, took) -> None:
    print(f"{loops} loop(s) of the shipped scenario, {n} ranks, {polls} polls every "
          f"{POLL:g} s ({took:.0f} s to run)")
    print("polls from a fault's start to its first verdict on screen (pending) and confirmed")
    print("(the median over the loops; a poll is 2 s):")
    for index, (effect, rank, start, _end) in enumerate(faults):
        if not explained(effect, rank, 8):
            continue
        pending, confirmed = first_pending.get(index), first_confirmed.get(index)
        shown = "never" if not pending else f"{median(pending) / POLL + 1:4.0f}"
        sure = "never" if not confirmed else f"{median(confirmed) / POLL + 1:4.0f}"
        print(f"  {effect:<17} rank {rank!s:<5} at {start:>3.0f} s   pending {shown}   "
              f"confirmed {sure}")
    print(f"wrong hang culprits: {len(wrong_culprits)} {sorted(wrong_culprits) or ''}")
    print(f"anomaly flickers (ended and back within {FLICKER_GAP:g} s): "
          f"{sum(flickers.values())} {dict(flickers) or ''}")
    print(f"confirmed anomalies no running fault explains: {len(unexplained)} "
          f"{dict(sorted(unexplained.items(), key=str)[:10]) or ''}")


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def hang_cases(nodes: int) -> None:
    """The frozen rank, with and without GPU metrics, and a death the job steps past."""
    frozen = Fault("collective_hang", 311, 20.0, 100.0, {"cause": "missing", "dumps": "none"})
    crawl = Fault("rank_death", 455, 20.0, 100.0, {"others_step": 6.0, "dumps": "none"})
    last_watchdog = 20.0 + (WATCHDOG_TIMEOUT_MS + 900) / 1000
    print(f"\nhang cases, {nodes * 8} ranks, polls every {POLL:g} s:")
    for name, fault, strip in (("frozen rank", frozen, False),
                               ("frozen rank, no SM metric", frozen, True),
                               ("dead rank, the others step every 6 s", crawl, False)):
        rank = fault.rank % (nodes * 8)
        rows = list(_hang_rows(fault, nodes, strip, until=fault.end + 20.0))
        named = [t for t, found, _ in rows if any(a.confirmed and a.rank == rank for a in found)]
        culprits = {tuple(c) for _, _, c in _verdicts(rows)}
        during = [found for t, found, _ in rows if named and named[0] <= t < fault.end]
        gaps = sum(1 for found in during if not found)
        starts = {a.since for found in during for a in found}
        when = "never" if not named else (
            f"{named[0] - last_watchdog:+.1f} s from the last watchdog line"
            if fault.effect == "collective_hang" else f"{named[0] - fault.start:.0f} s after")
        print(f"  {name:<38} named {when}; culprits {sorted(culprits)} (truth [{rank}]);"
              f" polls without the row {gaps}, starts {len(starts)}")
    healthy = Scenario("healthy", 3600.0, 1.12, 4194304, ())
    suspected = sum(bool(idle_gpus(frame.values["sm_active"], frame.time))
                    for frame in (SimCluster(nodes, 8, 7, healthy).frame_at(t)
                                  for t in range(0, 3600, int(POLL))))
    print(f"  idle-GPU rule over a healthy hour: {suspected} of {3600 // int(POLL)} polls"
          " suspected a rank")


def _hang_rows(fault: Fault, nodes: int, strip: bool, until: float):
    """(seconds into the scenario, the hang rows) per poll, and the verdict's culprits."""
    cluster = SimCluster(nodes, 8, 7, Scenario("case", 300.0, 1.12, 4194304, (fault,)))
    if strip:
        frame_at = cluster.frame_at
        cluster.frame_at = lambda t: replace(frame_at(t), values={
            k: v for k, v in frame_at(t).values.items() if k != "sm_active"})
    start = 1_800_000_000.0
    clock = FakeClock(start)
    with tempfile.TemporaryDirectory() as folder:
        writer = LogWriter(cluster, Path(folder), seed=7, epoch=start)
        source = DemoSource(cluster, clock, start, writer)
        settings = load_settings(overrides={"logs": {"spec": writer.layout_spec}}, environ={})
        pipeline = Pipeline(settings, source, clock=clock)
        while clock.now - start <= until:
            source.flush_logs()
            analysis = asyncio.run(pipeline.poll())
            pipeline.triage.wait(60.0)
            hang = analysis.hang
            yield (clock.now - start, [a for a in analysis.anomalies if a.kind == "hang"],
                   hang.behind if hang is not None and hang.sure else None)
            clock.now += POLL


def _verdicts(rows: list) -> list:
    return [row for row in rows if row[2] is not None]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=12)
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--cases-only", action="store_true", help="only the hang cases")
    args = parser.parse_args()
    if not args.cases_only:
        run(args.loops, args.nodes)
    hang_cases(args.nodes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
