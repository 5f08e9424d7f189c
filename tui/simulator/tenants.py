"""Other jobs sharing the simulated job's nodes (the scenario's ``[[tenant]]`` tables), placed
on the GPUs after the job's own: the node in this picture has more GPUs than the job took.

The exporter serves their GPUs as dcgm-exporter does (their own UUIDs, labelled with their
pod or HPC job); the demo source answers who else is on a node from the same placement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.advice.tenants import Gpu, NodeTenants, hpc_user, tenants_of
from ..core.model import RankMap
from .cluster import gpu_uuid
from .scenario import Tenant


@dataclass(frozen=True)
class PlacedTenant:
    """A tenant on its node: its GPUs' indices and UUIDs."""

    host: str
    node: int
    name: str
    namespace: str
    gpus: tuple[int, ...]
    uuids: tuple[str, ...]


def place(tenants: Sequence[Tenant], rank_map: RankMap, seed: int) -> tuple[PlacedTenant, ...]:
    """Each tenant on the node of its rank (taken modulo the ranks, as a fault's is), on
    the GPUs after the job's and the earlier tenants' there."""
    if not rank_map.ranks:
        return ()
    taken: dict[str, int] = {}  # host -> GPUs used so far
    placed = []
    for tenant in tenants:
        rank = rank_map.ranks[tenant.rank % len(rank_map.ranks)]
        first = taken.get(rank.host, rank_map.gpus_per_node)
        gpus = tuple(range(first, first + tenant.gpus))
        taken[rank.host] = first + tenant.gpus
        uuids = tuple(gpu_uuid(seed, f"tenant:{rank.host}:{gpu}") for gpu in gpus)
        placed.append(PlacedTenant(rank.host, rank.node, tenant.name, tenant.namespace, gpus,
                                   uuids))
    return tuple(placed)


def tenants_on(placed: Sequence[PlacedTenant], rank_map: RankMap, nodes: Sequence[str]
               ) -> dict[str, NodeTenants]:
    """Who else is on each of ``nodes``, as a bare-metal exporter's ``hpc_job`` says."""
    gpus = [Gpu(t.host, gpu, uuid, hpc_user(t.name))
            for t in placed for gpu, uuid in zip(t.gpus, t.uuids, strict=True)]
    return tenants_of(gpus, rank_map, nodes)
