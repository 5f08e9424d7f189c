"""A rank's identity for the life of the job: how a newly learned rank map merges with the
one already known, so that no rank ever loses or changes its number, host and GPU."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .model import Rank, RankMap
from .ranks import FROM_DCGM, FROM_FILE, FROM_JOB, FROM_SLURM

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
    by host and GPU, so they never renumber: a new GPU gets the next free number. What
    ``new`` left out is what the map says it left out now.
    """
    if not old.ranks or trust(new) < trust(old):
        notice = f"ranks now from {new.source} (were from {old.source})" if old.ranks else ""
        return new, notice
    if trust(new) > trust(old):
        return old, ""
    merged = _merge_places(old, new) if new.source.startswith(FROM_DCGM) else (
        _merge_numbers(old, new))
    if merged.left_out != new.left_out:
        merged = replace(merged, left_out=new.left_out)
    return merged, ""


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
