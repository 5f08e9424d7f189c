"""A simulated fleet: several jobs of different sizes, each served as its own exporter.

``config/fleet.toml`` lists the jobs (name, scenario, nodes, seed): the demo's own job and,
beside it, healthy ones, one stalled, one that lost a rank. Each job is its own SimCluster
behind its own port (``port``, ``port + 1``, ...), as each job's exporters are their own
scrape targets on a real cluster; the seed gives each job's GPUs their own UUIDs, and each job
has nodes of its own (``first_node_of``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..settings.paths import shipped_config_dir
from ..settings.reader import ConfigError, read_toml
from .cluster import SimCluster
from .exporter import ExportOptions, MetricsServer, make_server
from .scenario import ScenarioError, load_scenario

MOST_JOBS = 64


@dataclass(frozen=True)
class FleetJob:
    name: str
    scenario: Path | None  # None: the demo's own scenario
    nodes: int
    seed: int


def default_fleet_path() -> Path:
    return shipped_config_dir() / "fleet.toml"


def load_fleet(path: Path | None = None) -> list[FleetJob]:
    """The fleet's jobs; ScenarioError (naming the file) on anything wrong."""
    path = default_fleet_path() if path is None else Path(path)
    try:
        data = read_toml(path)
    except ConfigError as error:  # it names the file and says why
        raise ScenarioError(f"the fleet: {error}") from None
    jobs = data.get("job")
    if not isinstance(jobs, list) or not 0 < len(jobs) <= MOST_JOBS:
        raise ScenarioError(f"{path}: [[job]] must list 1 to {MOST_JOBS} jobs")
    return [_job(path, index, entry) for index, entry in enumerate(jobs)]


def _job(path: Path, index: int, entry: object) -> FleetJob:
    where = f"{path}: job {index + 1}"
    if not isinstance(entry, dict):
        raise ScenarioError(f"{where}: not a table")
    name, scenario = entry.get("name"), entry.get("scenario", "")
    nodes, seed = entry.get("nodes"), entry.get("seed", index)
    if not isinstance(name, str) or not name or not isinstance(scenario, str):
        raise ScenarioError(f"{where}: name and scenario must be text")
    if not isinstance(nodes, int) or not 1 <= nodes <= 4096 or not isinstance(seed, int):
        raise ScenarioError(f"{where}: nodes must be a whole number 1-4096, seed whole")
    return FleetJob(name, path.parent / scenario if scenario else None, nodes, seed)


def first_node_of(jobs: list[FleetJob], first: int = 0) -> list[int]:
    """Each job's first node: the jobs side by side, from node ``first``, none sharing a
    host (a node whose GPUs serve several jobs is a tenant's, said in the scenario)."""
    starts, next_node = [], first
    for job in jobs:
        starts.append(next_node)
        next_node += job.nodes
    return starts


def fleet_servers(jobs: list[FleetJob], host: str, port: int, start: float,
                  gpus_per_node: int = 8, options: ExportOptions | None = None,
                  clock: Callable[[], float] | None = None) -> list[MetricsServer]:
    """One bound server per job, on ``port`` onwards (0: free ports); the caller serves
    them. OSError when a port is taken (the servers already made are closed)."""
    servers: list[MetricsServer] = []
    first_nodes = first_node_of(jobs)
    try:
        for offset, job in enumerate(jobs):
            cluster = SimCluster(job.nodes, gpus_per_node, job.seed, load_scenario(job.scenario),
                                 first_node=first_nodes[offset])
            job_options = replace(options or ExportOptions(), job=job.name)
            extra = {"clock": clock} if clock is not None else {}
            servers.append(make_server(cluster, job_options, host, port + offset if port else 0,
                                       start=start, **extra))
    except BaseException:
        for server in servers:
            server.server_close()
        raise
    return servers


def serve_fleet(servers: list[MetricsServer]) -> None:
    """Serve every job until KeyboardInterrupt: the first from this thread, the others from
    threads of their own; all closed at the end."""
    threads = [threading.Thread(target=server.serve_forever, daemon=True)
               for server in servers[1:]]
    for thread in threads:
        thread.start()
    try:
        servers[0].serve_forever()
    finally:
        for server in servers[1:]:
            server.shutdown()
        for server in servers:
            server.server_close()
