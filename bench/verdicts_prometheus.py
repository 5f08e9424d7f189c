"""Verdicts through a real Prometheus: for each scripted fault, how many polls from the moment
Prometheus has its data to ranktop showing it (pending) and to ranktop confirming it.

    .venv/bin/python bench/verdicts_prometheus.py [--nodes 64] [--only straggler,xid]

The whole path: `ranktop simulate` (the shipped scenario) -> a Prometheus scraping it every
second -> ranktop's own Pipeline (PrometheusSource -> Analyser), polled every 2 s of real time.
Before each of ranktop's polls a plain instant query asks Prometheus whether it holds the
fault's evidence yet (rank 37's GPU above 82 °C, rank 201's compute time above 1.25x the
median, ...): the first poll where it does is poll 1. Faults close in time share one run of
the simulator, started a little before the first of them; a run ends when all its faults are
confirmed or past their time limit. Needs Debian's prometheus; run from the repository root.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from verdicts import PRIMARY, explained  # bench/verdicts.py: this script's folder is on the path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ranktop.tui.core.analysis import Analysis  # noqa: E402
from ranktop.tui.core.config_values import DetectSettings  # noqa: E402
from ranktop.tui.engine.pipeline import Pipeline  # noqa: E402
from ranktop.tui.settings.config import load_settings  # noqa: E402
from ranktop.tui.simulator.scenario import Fault, load_scenario  # noqa: E402
from ranktop.tui.sources.prometheus.source import PrometheusSource  # noqa: E402

from tests.integration.cluster import Prometheus, Simulator, instant  # noqa: E402

SCENARIO = ROOT / "config" / "scenario.toml"
POLL = 2.0
LEAD = 14.0  # the simulator starts this long before a run's first fault
SLACK = 40.0  # past its start and its hold, a fault that is still not confirmed is given up
GAP = 15.0  # a fault joins the run before it if it starts within this of that run's end
GPUS = 8
QUERY_ROOM = 0.3  # seconds before each of ranktop's polls for the plain queries
HOLDS = {"thermal_throttle": "thermal_seconds", "straggler": "straggler_seconds",
         "nvlink_drop": "nvlink_seconds", "job_stall": "job_stall_seconds"}

Ask = Callable[[str], list]  # an instant query against Prometheus, now


@dataclass
class Place:
    """A rank's GPU and host, as the job's own series label them."""

    uuid: str
    host: str


@dataclass
class Watch:
    """One fault, and the polls at which Prometheus had it, ranktop showed and confirmed it."""

    fault: Fault
    key: tuple[str, int | None]
    data: int | None = None
    shown: int | None = None
    confirmed: int | None = None
    rule: str = ""
    held: float = 0.0  # how long it had held when confirmed
    row: str = ""  # its line in the anomaly list when first shown, of how many

    def observe(self, poll: int, has_data: bool, analysis: Analysis) -> None:
        if self.data is None and has_data:
            self.data = poll
        rows = list(analysis.anomalies)
        anomaly = next((a for a in rows if a.key == self.key), None)
        if anomaly is None:
            return
        if self.shown is None:
            self.shown, self.row = poll, f"{rows.index(anomaly) + 1}/{len(rows)}"
        if self.confirmed is None and anomaly.confirmed:
            self.confirmed, self.rule, self.held = poll, anomaly.rule, anomaly.held

    def settle(self) -> None:
        """Shown one poll before the plain query had it: a scrape landed between that query
        and ranktop's own, so Prometheus had the data at ranktop's poll."""
        if self.shown is not None and self.data == self.shown + 1:
            self.data = self.shown

    def polls(self, poll: int | None) -> str:
        """Polls from the data to ``poll``: 1 when ranktop's poll that first could see it did."""
        if poll is None:
            return "never"
        return "no data" if self.data is None else str(poll - self.data + 1)


def evidence(fault: Fault, place: Place | None, job: str, detect: DetectSettings
             ) -> Callable[[Ask], bool]:
    """Whether Prometheus, asked plainly, holds what the fault shows in its metrics."""
    mine = "" if place is None else f'{{UUID="{place.uuid}"}}'
    jobs = f'{{training_job="{job}"}}'
    rank = f'{{training_job="{job}",rank="{fault.rank}"}}'
    plain = {
        "thermal_throttle": f"DCGM_FI_DEV_GPU_TEMP{mine} > {detect.temperature_c:g}",
        "straggler": (f"training_compute_seconds{rank} > {detect.straggler_factor:g} * "
                      f"scalar(quantile(0.5, training_compute_seconds{jobs}))"),
        "ecc_dbe": f"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{mine} > 0",
        "xid": f"DCGM_FI_DEV_XID_ERRORS{mine} > 0",
        "job_stall": (f"count(100 * DCGM_FI_PROF_SM_ACTIVE < {detect.sm_active_pct:g}) > "
                      f"{detect.job_stall_share:g} * count(DCGM_FI_PROF_SM_ACTIVE)"),
        # the level only (the rule's spread bar needs the ordinary values, not a PromQL)
        "loss_divergence": (f"avg(training_loss{jobs}) > {1 + detect.loss_rise:g} * "
                            f"quantile_over_time(0.5, avg(training_loss{jobs})"
                            f"[{detect.loss_window_seconds:g}s:1s])"),
    }
    if fault.effect in plain:
        return lambda ask: bool(ask(plain[fault.effect]))
    if fault.effect == "rank_death":  # none of its series left
        return lambda ask: not ask(f"DCGM_FI_DEV_GPU_TEMP{mine} or training_step_seconds{rank}")
    if fault.effect == "nvlink_drop":
        return lambda ask: nvlink_low(ask, place.host, detect.nvlink_fraction)
    raise ValueError(f"no evidence query for {fault.effect}")


def nvlink_low(ask: Ask, host: str, fraction: float) -> bool:
    """The host's median GPU NVLink bandwidth under ``fraction`` of the median host's."""
    answer = ask("quantile by (Hostname) (0.5, DCGM_FI_PROF_NVLINK_TX_BYTES"
                 " + DCGM_FI_PROF_NVLINK_RX_BYTES)")
    per_host = {s["metric"].get("Hostname"): float(s["value"][1]) for s in answer}
    if host not in per_host:
        return False
    return per_host[host] < fraction * statistics.median(per_host.values())


def place_of(url: str, job: str, rank: int) -> Place:
    answer = instant(url, f'training_step_seconds{{training_job="{job}",rank="{rank}"}}')
    if not answer:
        raise SystemExit(f"verdicts_prometheus: rank {rank} has no series at its run's start")
    labels = answer[0]["metric"]
    return Place(labels["gpu_uuid"], labels["hostname"])


def hold(fault: Fault, detect: DetectSettings) -> float:
    return float(getattr(detect, HOLDS[fault.effect])) if fault.effect in HOLDS else 0.0


def runs(faults: list[Fault], detect: DetectSettings) -> list[list[Fault]]:
    """Faults in order of start, those close in time together."""
    grouped: list[list[Fault]] = []
    for fault in sorted(faults, key=lambda f: f.start):
        if grouped and fault.start - LEAD < max(f.start + hold(f, detect) + GAP
                                               for f in grouped[-1]):
            grouped[-1].append(fault)
        else:
            grouped.append([fault])
    return grouped


@dataclass
class Run:
    """One run's faults, the scenario's time at each poll, each poll's time, and the polls
    whose plain queries overran QUERY_ROOM (delaying ranktop's poll)."""

    watches: list[Watch]
    times: list[float] = field(default_factory=list)
    took: list[float] = field(default_factory=list)
    late: int = 0


def run(group: list[Fault], job: str, nodes: int, seed: int, folder: Path) -> Run:
    """One simulator and one Prometheus for ``group``."""
    start = max(0.0, group[0].start - LEAD)
    simulator = Simulator(SCENARIO, seed, nodes, extra=("--start", f"{start:g}"))
    ready = time.time()  # the scenario is at about `start` now
    try:
        prometheus = Prometheus(folder, [simulator.port])
        try:
            prometheus.wait_for_series(f'count(training_step_seconds{{training_job="{job}"}})',
                                       1)  # one scrape holds every rank
            return watch(group, job, prometheus.url, lambda: start + time.time() - ready)
        finally:
            prometheus.stop()
    finally:
        simulator.stop()


def watch(group: list[Fault], job: str, url: str, clock: Callable[[], float]) -> Run:
    """Poll ranktop every POLL seconds, each poll after the plain evidence queries, until
    every fault of ``group`` is confirmed or given up."""
    settings = load_settings(overrides={"prometheus": {"url": url, "job": job}}, environ={})
    detect = settings.detect
    pipeline = Pipeline(settings, PrometheusSource(settings))
    result = Run([Watch(f, next(k for k in explained(f.effect, f.rank, GPUS)
                                if k[0] == PRIMARY[f.effect])) for f in group])
    checks = [evidence(f, None if f.rank is None else place_of(url, job, f.rank), job, detect)
              for f in group]
    give_up = max(f.start + hold(f, detect) + SLACK for f in group)
    due = time.monotonic() + QUERY_ROOM  # when ranktop's next poll is due
    while True:
        # the plain queries just before ranktop's poll, which starts when due whatever they
        # took: the detectors time their holds by the polls
        time.sleep(max(0.0, due - QUERY_ROOM - time.monotonic()))
        result.times.append(clock())
        had = [w.data is not None or check(lambda q: instant(url, q))
               for w, check in zip(result.watches, checks, strict=True)]
        result.late += time.monotonic() > due
        time.sleep(max(0.0, due - time.monotonic()))
        began = time.monotonic()
        analysis = asyncio.run(pipeline.poll())
        result.took.append(time.monotonic() - began)
        for w, has_data in zip(result.watches, had, strict=True):
            w.observe(len(result.times) - 1, has_data, analysis)
        if all(w.confirmed is not None for w in result.watches) or result.times[-1] > give_up:
            for w in result.watches:
                w.settle()
            return result
        # as the console schedules its polls (app.poll_forever): POLL after the last began
        due = began + max(POLL, result.took[-1] + 0.05)


def report(runs_done: list[Run], detect: DetectSettings) -> None:
    print("polls from the poll where Prometheus first has a fault's data (1 = that poll) to "
          "ranktop showing it (pending) and confirming it; a poll is 2 s:")
    head = ("fault", "rank", "data at", "pending", "confirmed", "held", "hold", "early rule",
            "row")
    lines = [head]
    for done in runs_done:
        for w in done.watches:
            data_at = ("never" if w.data is None
                       else f"+{done.times[w.data] - w.fault.start:.0f} s")
            held = "-" if w.confirmed is None else f"{w.held:.1f} s"
            lines.append((w.fault.effect, "job" if w.fault.rank is None else str(w.fault.rank),
                          data_at, w.polls(w.shown), w.polls(w.confirmed), held,
                          f"{hold(w.fault, detect):g} s", w.rule or "-", w.row or "-"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    for line in lines:
        cells = zip(line, widths, strict=True)
        print("  " + "  ".join(cell.ljust(width) for cell, width in cells).rstrip())
    print("data at: when Prometheus first had it, after the fault's start (by the scenario's "
          "clock, +-1 s); held: how long ranktop had held it when it confirmed it; hold: how "
          "long its detector must hold; row: its line in the anomaly list when first shown")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", default="", metavar="EFFECTS",
                        help="comma-separated fault effects to measure (default: all)")
    args = parser.parse_args()
    if shutil.which("prometheus") is None:
        print("verdicts_prometheus: needs Prometheus on PATH (Debian: apt-get install "
              "prometheus)", file=sys.stderr)
        return 2
    os.chdir(ROOT)  # the simulator runs as `python -m ranktop` from the repository root
    scenario = load_scenario(SCENARIO)
    n = args.nodes * GPUS
    only = {e for e in args.only.split(",") if e}
    unknown = only - set(PRIMARY)
    if unknown or args.nodes < 1:
        print(f"verdicts_prometheus: unknown effect(s) {sorted(unknown)}; known: "
              f"{sorted(PRIMARY)}" if unknown else "verdicts_prometheus: --nodes must be >= 1",
              file=sys.stderr)
        return 2
    faults = [replace(f, rank=None if f.rank is None else f.rank % n) for f in scenario.faults
              if f.effect in PRIMARY and (not only or f.effect in only)]
    with tempfile.TemporaryDirectory() as folder:
        os.environ["XDG_CONFIG_HOME"] = folder  # ranktop's defaults, not the user's config
        settings = load_settings(environ={})
        done: list[Run] = []
        began = time.monotonic()
        for index, group in enumerate(runs(faults, settings.detect)):
            names = ", ".join(f.effect for f in group)
            print(f"run {index + 1}: {names} (from {max(0, group[0].start - LEAD):g} s)",
                  flush=True)
            run_dir = Path(folder) / f"run{index}"
            run_dir.mkdir()
            done.append(run(group, scenario.name, args.nodes, args.seed, run_dir))
    took = [t for d in done for t in d.took]
    late = sum(d.late for d in done)
    print(f"{scenario.name}: {n} ranks, {len(took)} polls every {POLL:g} s, a poll took "
          f"median {statistics.median(took) * 1e3:.0f} ms, max {max(took) * 1e3:.0f} ms; "
          f"{late} delayed by the plain queries; {time.monotonic() - began:.0f} s in all")
    report(done, settings.detect)
    return 0


if __name__ == "__main__":
    sys.exit(main())
