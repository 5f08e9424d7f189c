"""The demo's fleet: the demo's own job and, beside it, the small jobs of ``config/fleet.toml``
(one stalled, one that lost a rank), each a simulated cluster on nodes of its own, read at
the demo's clock.

``DemoFleet`` answers the jobs list as ``FleetReader`` does against Prometheus (one
``FleetRead`` per refresh, the same facts) and makes the source of any of its jobs when the
list opens it. The other jobs began ``LEAD_SECONDS`` before the demo's, so the list shows
their faults from the first refresh. The scenario's tenants (``[[tenant]]``, other jobs on
the demo job's nodes) that are jobs of the fleet share those nodes in both rows.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from ..core.fleet import JobFacts, Limits
from ..settings.config import DemoSettings
from ..simulator.cluster import SimCluster
from ..simulator.fleet import FleetJob, first_node_of, load_fleet
from ..simulator.scenario import load_scenario
from ..simulator.tenants import place
from .demo import DemoSource
from .prometheus.fleet import PROGRESS_SECONDS, FleetRead

LEAD_SECONDS = 600.0  # the fleet's other jobs began this long before the demo's job
HOUR = 3600.0
NODE_LIMIT = 8  # the fleet's jobs keep the demo cheap: tens of ranks each


@dataclass(frozen=True)
class DemoJob:
    cluster: SimCluster
    started: float  # when its scenario began (Unix seconds)


class DemoFleet:
    """The demo's jobs, answered as the jobs list asks."""

    source_name = "demo (simulated)"

    def __init__(self, demo: DemoSettings, started: float,
                 clock: Callable[[], float] = time.time,
                 fleet: list[FleetJob] | None = None) -> None:
        self.clock = clock
        self.limits = Limits(progress_seconds=PROGRESS_SECONDS)
        own = SimCluster(demo.nodes, demo.gpus_per_node, demo.seed, load_scenario())
        self.demo_job = own.job_name
        self.jobs: dict[str, DemoJob] = {self.demo_job: DemoJob(own, started)}
        others = [replace(job, nodes=min(job.nodes, NODE_LIMIT))
                  for job in (fleet if fleet is not None else load_fleet())
                  if job.scenario is not None]  # the demo's own scenario is the demo's job
        for job, first in zip(others, first_node_of(others, demo.nodes), strict=True):
            if job.name in self.jobs:
                continue
            cluster = SimCluster(job.nodes, demo.gpus_per_node, job.seed,
                                 load_scenario(job.scenario), first_node=first)
            cluster.job_name = job.name  # as its exporter labels it, not its scenario's name
            self.jobs[job.name] = DemoJob(cluster, started - LEAD_SECONDS)
        self.shared = _shared_nodes(own, demo.seed, set(self.jobs))

    def job_ids(self) -> list[str]:
        return list(self.jobs)

    def read(self) -> FleetRead:
        now = self.clock()
        facts = [self.facts(name, now) for name in self.jobs]
        return FleetRead(facts, now, recorded=False, queries=0, bytes=0)

    def facts(self, name: str, now: float) -> JobFacts:
        """One job's facts at ``now``, as the list's queries would find them."""
        job = self.jobs[name]
        t = now - job.started
        cluster, window = job.cluster, self.limits.progress_seconds
        frame = cluster.frame_at(max(0.0, t))
        ranks = len(cluster.rank_map)
        compute = [v for v in frame.values.get("compute_time", ()) if v == v]
        median = statistics.median(compute) if compute else 0.0
        return JobFacts(
            name=name, ranks_up=sum(frame.ranks_up(ranks)), ranks_expected=ranks,
            steps=float(_steps(cluster, t, window)), window_full=t >= window,
            advanced=_advanced(job, t, window), goodput=_goodput(cluster, t, window),
            hottest_c=max((v for v in frame.values.get("temperature", ()) if v == v),
                          default=None),
            xid_gpus=_count_above(frame.values.get("xid", ())),
            ecc_gpus=_count_above(frame.values.get("ecc_dbe", ())),
            straggler=max(compute) / median if median > 0 else None,
            shared=self.shared.get(name, {}))

    def source(self, name: str) -> DemoSource | None:
        """A console's source for one of the jobs (None: not one of the demo's), without
        logs: the demo's own job is made by ``demo_source``, with its logs."""
        job = self.jobs.get(name)
        return None if job is None else DemoSource(job.cluster, self.clock, job.started)

    def idle_source(self) -> DemoSource:
        """The smallest job's source: what the console holds while no job is open."""
        smallest = min(self.jobs.values(), key=lambda job: len(job.cluster.rank_map))
        return DemoSource(smallest.cluster, self.clock, smallest.started)

    def close(self) -> None:
        """Nothing is held: every figure is computed when read."""


def _steps(cluster: SimCluster, t: float, window: float) -> int:
    return cluster.step_at(max(0.0, t)) - cluster.step_at(max(0.0, t - window))


def _advanced(job: DemoJob, t: float, window: float) -> float | None:
    """When it last made a step, to a window, within the hour (None: not in it)."""
    moment = t
    while moment >= max(0.0, t - HOUR):
        if _steps(job.cluster, moment, window) > 0:
            return job.started + moment
        moment -= window
    return None


def _goodput(cluster: SimCluster, t: float, window: float) -> float | None:
    """The share of the hour's windows in which it advanced (since it began)."""
    moments = [t - i * window for i in range(int(HOUR / window))]
    moments = [m for m in moments if m > 0]
    if not moments:
        return None
    return sum(_steps(cluster, m, window) > 0 for m in moments) / len(moments)


def _count_above(values) -> int:
    return sum(1 for v in values if v == v and v > 0)


def _shared_nodes(own: SimCluster, seed: int, names: set[str]
                  ) -> dict[str, Mapping[str, tuple[str, ...]]]:
    """For each job, the nodes it shares with others of the fleet, and with whom: the demo
    job's tenants that are jobs of the fleet."""
    shared: dict[str, dict[str, tuple[str, ...]]] = {}
    for tenant in place(own.scenario.tenants, own.rank_map, seed):
        if tenant.name not in names or tenant.name == own.job_name:
            continue
        mine = shared.setdefault(own.job_name, {})
        mine[tenant.host] = (*mine.get(tenant.host, ()), tenant.name)
        theirs = shared.setdefault(tenant.name, {})
        theirs[tenant.host] = (*theirs.get(tenant.host, ()), own.job_name)
    return dict(shared)
