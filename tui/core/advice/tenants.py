"""Who else is on a node: the other jobs or pods whose GPUs are on it, which a drain of the
node stops too.

A backend answers with one ``Gpu`` per GPU of the nodes asked about, labelled as
dcgm-exporter labels it: with the pod using it (Kubernetes), or the HPC job (its
``--hpc-job-mapping-dir``), or nothing. ``tenants_of`` drops the job's own GPUs (by UUID, else
by host and GPU index, from the rank map) and groups the rest by who uses them. A node
asked about and answered has its ``NodeTenants`` (maybe with no one else on it); a node
not asked, or whose answer failed, is not known."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..model import RankMap

NO_JOB_LABEL = ""  # a GPU with no pod nor job label: something may run there, unnamed
HPC_JOB = "job "  # before an HPC job's id, as the screen names who uses a GPU


@dataclass(frozen=True)
class Gpu:
    """One GPU of a node, as the backend labels it; ``user`` is who uses it, already
    named for the screen ("training/eval-0", "job 4242"), or ``NO_JOB_LABEL``."""

    node: str
    gpu: int
    uuid: str = ""
    user: str = NO_JOB_LABEL


def pod_user(pod: str, namespace: str = "") -> str:
    """A pod, as the screen names who uses a GPU: "training/eval-0"."""
    return f"{namespace}/{pod}" if namespace else pod


def hpc_user(job: str) -> str:
    """An HPC job, as the screen names who uses a GPU: "job 4242"."""
    return f"{HPC_JOB}{job}"


def job_names(user: str) -> tuple[str, ...]:
    """The names who uses a GPU may go by in the jobs list: an HPC job's id; a pod's name,
    then its namespace; none for a GPU with no label."""
    if user.startswith(HPC_JOB):
        return (user[len(HPC_JOB):],)
    namespace, slash, pod = user.partition("/")
    return (pod, namespace) if slash else tuple(filter(None, [user]))


@dataclass(frozen=True)
class Tenant:
    """Another job (or pod) on a node, and its GPUs there."""

    user: str
    gpus: tuple[int, ...]

    @property
    def text(self) -> str:
        """"training/eval-0 (GPUs 8, 9)"; "a GPU with no job label (GPU 8)"."""
        noun = "GPUs" if len(self.gpus) > 1 else "GPU"
        where = f"{noun} {', '.join(str(g) for g in self.gpus)}"
        if self.user == NO_JOB_LABEL:
            who = "GPUs with no job label" if len(self.gpus) > 1 else "a GPU with no job label"
            return f"{who} ({where})"
        return f"{self.user} ({where})"


@dataclass(frozen=True)
class NodeTenants:
    """What the backend said of one node: the others on it, or why it could not say."""

    others: tuple[Tenant, ...] = ()
    error: str = ""  # the backend was asked and failed: not known

    @property
    def known(self) -> bool:
        return not self.error


Neighbours = Mapping[str, NodeTenants]  # node -> what runs there besides the job


def tenants_of(gpus: Iterable[Gpu], rank_map: RankMap, nodes: Sequence[str]
               ) -> dict[str, NodeTenants]:
    """Each of ``nodes`` with the GPUs on it that are not the job's, by who uses them
    (in order of their first GPU); a node with none has an empty ``NodeTenants``."""
    own = _Own(rank_map)
    found: dict[str, dict[str, list[int]]] = {node: {} for node in nodes}
    for gpu in sorted(gpus, key=lambda g: (g.node, g.gpu)):
        if gpu.node not in found or own.holds(gpu):
            continue
        users = found[gpu.node].setdefault(gpu.user, [])
        if gpu.gpu not in users:
            users.append(gpu.gpu)
    return {node: NodeTenants(tuple(Tenant(user, tuple(g)) for user, g in users.items()))
            for node, users in found.items()}


class _Own:
    """The job's own GPUs: by UUID where the job named them (a GPU it did not name is
    another's, as in ``ranks.DcgmJoin``), else by host and GPU index."""

    def __init__(self, rank_map: RankMap) -> None:
        self.uuids = {r.uuid for r in rank_map.ranks if r.uuid}
        self.places = {(r.host, r.gpu) for r in rank_map.ranks}

    def holds(self, gpu: Gpu) -> bool:
        if self.uuids and gpu.uuid:
            return gpu.uuid in self.uuids
        return (gpu.node, gpu.gpu) in self.places


def failed(nodes: Iterable[str], why: str) -> dict[str, NodeTenants]:
    """``nodes`` not known, each saying ``why`` in one line."""
    line = " ".join(why.split()) or "the backend did not answer"
    return {node: NodeTenants(error=line) for node in nodes}


def others_text(node: str, tenants: NodeTenants | None) -> str:
    """What a drain of ``node`` does to the others there, in one line."""
    if tenants is None:
        return f"also on {node}: not known"
    if not tenants.known:
        return f"also on {node}: not known ({tenants.error})"
    if not tenants.others:
        return f"also on {node}: nothing else runs on it"
    listed = "; ".join(t.text for t in tenants.others)
    them = "it" if len(tenants.others) == 1 else "them"
    return f"also on {node}: {listed}: a drain stops {them} too"
