"""Which rank runs on which host and GPU, and which DCGM series belongs to which rank.

The rank map comes from, first that works: the labels of the job's own per-rank metrics; a
rank-map file; the Slurm node list with GPUs per node (torchrun's default order); and last
the order of host and GPU in DCGM's series. DCGM series join to ranks by GPU UUID where the
job's metrics carry it (containers and CUDA_VISIBLE_DEVICES renumber GPUs), else by host
(or pod) and GPU index. On Kubernetes the job's series may name only their pod: the rank's
node is then the one DCGM's series give for that pod.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ranktop.tui.core.domain import (
    DCGM_GPU_LABEL,
    DCGM_HOST_LABELS,
    DCGM_NODE_LABELS,
    DCGM_POD_LABELS,
    DCGM_UUID_LABELS,
)
from ranktop.tui.core.model import Rank, RankMap

FROM_JOB = "job metric labels"
FROM_FILE = "rank-map file"
FROM_SLURM = "Slurm node list"
FROM_DCGM = "host/GPU order (no rank labels: ranks are guessed)"


Labels = Mapping[str, str]
Found = Mapping[int, tuple[str, int, str, str]]  # rank -> (host, gpu, uuid, pod)


class RankMapError(ValueError):
    """A rank map that cannot be used; the message names the file and line."""


def from_job_series(series: Iterable[Labels], rank_label: str, host_label: str,
                    gpu_label: str, uuid_label: str, pod_label: str = "",
                    node_of_pod: Mapping[str, str] | None = None) -> RankMap | None:
    """Ranks named by the job's own metrics; None when no series carries a usable rank.

    A series with a pod and no host runs on the node ``node_of_pod`` names (from DCGM), or,
    where no node is known, is placed by its pod."""
    found: dict[int, tuple[str, int, str, str]] = {}
    nodes = node_of_pod or {}
    for labels in series:
        rank = _whole(labels.get(rank_label))
        if rank is None:
            continue
        gpu = _whole(labels.get(gpu_label))
        pod = labels.get(pod_label, "") if pod_label else ""
        host = labels.get(host_label) or nodes.get(pod) or pod or "?"
        found[rank] = (host, -1 if gpu is None else gpu, labels.get(uuid_label, ""), pod)
    if not found:
        return None
    return _build(found, FROM_JOB)


def nodes_of_pods(series: Iterable[Labels]) -> dict[str, str]:
    """Each pod's node, as DCGM's series on Kubernetes say it (the pod under ``exported_pod``
    behind a ServiceMonitor, ``pod`` with honor_labels; the node under ``Hostname``)."""
    nodes: dict[str, str] = {}
    for labels in series:
        node = next((labels[k] for k in DCGM_NODE_LABELS if labels.get(k)), "")
        for key in DCGM_POD_LABELS:
            if node and labels.get(key):
                nodes.setdefault(labels[key], node)
    return nodes


def from_file(path: Path) -> RankMap:
    """Lines of ``rank,host,gpu`` (commas or spaces; ``#`` comments; a header is skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise RankMapError(f"{path}: cannot read: {error.__class__.__name__}") from None
    found: dict[int, tuple[str, int, str, str]] = {}
    for number, line in enumerate(lines, start=1):
        fields = [f for f in re.split(r"[,\s]+", line.split("#", 1)[0].strip()) if f]
        if not fields or (number == 1 and not fields[0].isdigit()):
            continue
        rank, gpu = (_whole(fields[0]), _whole(fields[2])) if len(fields) >= 3 else (None, None)
        if rank is None or gpu is None:
            raise RankMapError(f"{path}: line {number}: expected 'rank,host,gpu' (got {line!r})")
        if rank in found:
            raise RankMapError(f"{path}: line {number}: rank {rank} appears twice")
        found[rank] = (fields[1], gpu, "", "")
    if not found:
        raise RankMapError(f"{path}: no ranks in the file")
    return _build(found, f"{FROM_FILE} {path.name}")


def from_slurm(nodelist: str, gpus_per_node: int) -> RankMap:
    """torchrun's default order over a Slurm node list: node by node, GPU by GPU."""
    hosts = expand_nodelist(nodelist)
    if not hosts:
        raise RankMapError(f"Slurm node list {nodelist!r} names no nodes")
    return RankMap.grid(hosts, gpus_per_node, FROM_SLURM)


def from_dcgm(series: Iterable[Labels]) -> RankMap | None:
    """A last resort: every GPU DCGM reports, ordered by host and GPU index."""
    gpus = sorted({(_host(labels), _whole(labels.get(DCGM_GPU_LABEL)) or 0) for labels in series
                   if _host(labels)})
    if not gpus:
        return None
    found = {rank: (host, gpu, "", "") for rank, (host, gpu) in enumerate(gpus)}
    return _build(found, FROM_DCGM)


def expand_nodelist(text: str) -> list[str]:
    """Slurm's compressed host list, e.g. ``gpu-[001-003,007],login1`` -> five names."""
    names: list[str] = []
    for item in _split_outside_brackets(text.strip()):
        names.extend(_expand_item(item))
    return names


def _split_outside_brackets(text: str) -> list[str]:
    items, depth, current = [], 0, ""
    for char in text:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    items.append(current)
    return [item.strip() for item in items if item.strip()]


def _expand_item(item: str) -> list[str]:
    match = re.search(r"\[([^\]]*)\]", item)
    if match is None:
        return [item]
    head, tail = item[: match.start()], item[match.end():]
    names = []
    for part in match.group(1).split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise RankMapError(f"Slurm node list: cannot read range {part!r} in {item!r}")
        width = len(low)
        for number in range(int(low), int(high or low) + 1):
            names.extend(_expand_item(f"{head}{number:0{width}d}{tail}"))
    return names


class DcgmJoin:
    """Finds the rank of a DCGM series: by GPU UUID, else by host (or pod) and GPU index."""

    def __init__(self, rank_map: RankMap) -> None:
        self.by_uuid = {r.uuid: r.rank for r in rank_map.ranks if r.uuid}
        self.by_place = {(r.pod, r.gpu): r.rank for r in rank_map.ranks if r.pod}
        self.by_place.update({(r.host, r.gpu): r.rank for r in rank_map.ranks})

    def rank_of(self, labels: Labels) -> int | None:
        uuid = next((labels[k] for k in DCGM_UUID_LABELS if labels.get(k)), "")
        if uuid and self.by_uuid:
            # The job named its GPUs: a GPU it did not name is another job's, wherever it is.
            return self.by_uuid.get(uuid)
        gpu = _whole(labels.get(DCGM_GPU_LABEL))
        for key in DCGM_HOST_LABELS:
            host = labels.get(key)
            if host and (host, gpu) in self.by_place:
                return self.by_place[(host, gpu)]
        return None


def _host(labels: Labels) -> str:
    return next((labels[k] for k in DCGM_HOST_LABELS if labels.get(k)), "")


def _whole(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    return int(text) if text.isdigit() else None


def _build(found: Found, source: str) -> RankMap:
    """A dense rank map 0..max. A rank never seen (a gap in the labels: it died before
    anyone looked) is placed where torchrun's order puts it, when its neighbours say so;
    else on an unknown host."""
    hosts: list[str] = []
    for rank in sorted(found):
        if found[rank][0] not in hosts:
            hosts.append(found[rank][0])
    per_host: dict[str, int] = {}
    for host, *_ in found.values():
        per_host[host] = per_host.get(host, 0) + 1
    gpus_per_node = max(per_host.values())
    node_of = {host: index for index, host in enumerate(hosts)}
    ranks = [
        Rank(rank=r, host=found[r][0], gpu=found[r][1], node=node_of[found[r][0]],
             uuid=found[r][2], pod=found[r][3]) if r in found
        else _inferred(r, found, gpus_per_node, node_of)
        for r in range(max(found) + 1)
    ]
    return RankMap(ranks=tuple(ranks), hosts=tuple(hosts), gpus_per_node=gpus_per_node,
                   source=source)


def _inferred(rank: int, found: Found, gpus_per_node: int,
              node_of: Mapping[str, int]) -> Rank:
    """A gap rank between two seen ones on the same host, one GPU apart from each."""
    before, after = found.get(rank - 1), found.get(rank + 1)
    for neighbour, step in ((before, 1), (after, -1)):
        if neighbour is None or neighbour[1] < 0:
            continue
        host, gpu = neighbour[0], neighbour[1] + step
        other = after if step == 1 else before
        fits = 0 <= gpu < gpus_per_node
        agrees = other is None or other[0] != host or other[1] == gpu + step
        if fits and agrees:
            return Rank(rank=rank, host=host, gpu=gpu, node=node_of[host], inferred=True)
    return Rank(rank=rank, host="?", gpu=-1, node=-1, inferred=True)


# How much each way of learning the ranks is trusted, best first.
_TRUST = (FROM_JOB, FROM_FILE, FROM_SLURM, FROM_DCGM)


def trust(rank_map: RankMap) -> int:
    """Lower is better; a map not learned at all is the least trusted."""
    return next((i for i, prefix in enumerate(_TRUST) if rank_map.source.startswith(prefix)),
                len(_TRUST))


def merge(old: RankMap, new: RankMap) -> tuple[RankMap, str]:
    """The rank map after learning ``new``, and a notice when it was replaced.

    A rank keeps its number, host and GPU for the life of the job: a rank missing from
    ``new`` (its series vanished) stays as it was; the map only grows. A better source
    replaces the map (with a notice); a worse one changes nothing. Guessed ranks are matched
    by host and GPU, so they never renumber: a new GPU gets the next free number.
    """
    if not old.ranks or trust(new) < trust(old):
        notice = f"ranks now from {new.source} (were from {old.source})" if old.ranks else ""
        return new, notice
    if trust(new) > trust(old):
        return old, ""
    if new.source.startswith(FROM_DCGM):
        return _merge_places(old, new), ""
    return _merge_numbers(old, new), ""


def _merge_numbers(old: RankMap, new: RankMap) -> RankMap:
    ranks = list(old.ranks)
    changed = False
    for rank in new.ranks:
        if rank.inferred and rank.rank < len(ranks):
            continue  # what the old map knew of a gap is at least as good
        if rank.rank >= len(ranks):
            ranks.extend(new.ranks[len(ranks):rank.rank + 1])
            changed = True
        elif ranks[rank.rank] != rank:
            ranks[rank.rank] = rank
            changed = True
    return _relaid(ranks, old, new) if changed else old


def _merge_places(old: RankMap, new: RankMap) -> RankMap:
    known = {(r.host, r.gpu) for r in old.ranks}
    fresh = [r for r in new.ranks if (r.host, r.gpu) not in known]
    if not fresh:
        return old
    ranks = list(old.ranks)
    for rank in fresh:
        ranks.append(Rank(rank=len(ranks), host=rank.host, gpu=rank.gpu, node=-1))
    return _relaid(ranks, old, new)


def _relaid(ranks: Sequence[Rank], old: RankMap, new: RankMap) -> RankMap:
    """The ranks with node numbers that keep every old host's place."""
    hosts = list(old.hosts)
    for rank in ranks:
        if rank.host != "?" and rank.host not in hosts:
            hosts.append(rank.host)
    node_of = {host: index for index, host in enumerate(hosts)}
    placed = tuple(
        rank if rank.node == node_of.get(rank.host, -1)
        else replace(rank, node=node_of.get(rank.host, -1))
        for rank in ranks)
    return RankMap(ranks=placed, hosts=tuple(hosts),
                   gpus_per_node=max(old.gpus_per_node, new.gpus_per_node), source=old.source)
