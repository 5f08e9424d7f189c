"""Incidents: one root anomaly with everything it explains folded under it, so that one
problem takes one row and more distinct problems fit before the panel scrolls.

The rules of what explains what are here and nowhere else. Each names a cause, the
consequence it explains, where the two must be, and why:

- ``rank``: on the same rank (a throttling GPU's rank straggles);
- ``node``: on the same node (a GPU whose link takes errors drags its node's NVLink down);
- ``job``: the consequence is the whole job's, or another rank's (a hung job stalls).

A dead rank stops a synchronous job, but a job may step on without a rank it lost (a
replica group dropped, the rest training on): such a rank is *left behind*, and the rules
that hold because a dead rank stops the job (``stops``) do not hold for it. It explains no
hang, stall or slowdown, then or later, and went down with no hang: those are roots of
their own, and its ``missing`` is a root too.

Explanations chain (an XID kills a rank, the dead rank hangs the job, the hang stalls it),
and an incident is rooted at the first cause of its chain, with every link of the chain
folded under it, so an incident is one level deep. An anomaly nothing active explains is a
root of its own. Folding hides nothing: a consequence is still named on its root's row, and
its own text is kept in the incident's detail view and in ``ranktop report``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from ..anomaly import Anomaly
from ..domain import SEVERITIES
from ..model import RankMap

SCOPES = ("rank", "node", "job")


@dataclass(frozen=True)
class Rule:
    """``cause`` explains ``effect`` where ``scope`` says (one of SCOPES)."""

    cause: str  # an anomaly's kind
    effect: str
    why: str
    scope: str = "rank"
    stops: bool = False  # holds because a dead rank stops the job: not for one left behind


RULES = (
    Rule("thermal", "straggler",
         "a GPU that throttles for heat computes slower, so its rank straggles"),
    Rule("ecc", "memory", "an uncorrectable ECC error is what remaps a row of memory"),
    Rule("ecc", "remap_failure",
         "an uncorrectable ECC error with no spare row left fails its remap"),
    Rule("xid", "missing", "the GPU reported an XID, then its rank's series vanished"),
    Rule("xid", "pcie", "a GPU falling off the bus replays its PCIe transfers"),
    Rule("nvlink_errors", "nvlink",
         "a link taking CRC errors retries and retrains, dragging its node's NVLink down",
         "node"),
    Rule("missing", "hang",
         "the hang waits on this rank, and the rank is down: its going down is the hang's cause",
         stops=True),
    Rule("xid", "hang",
         "the hang waits on this rank, whose GPU reported an XID: the fault is the hang's cause "
         "(also once the rank is back, restarted, and the hang not yet over)"),
    Rule("hang", "job_stall", "a hung job's GPUs idle, waiting in a collective", "job"),
    Rule("hang", "throughput", "a hung job makes no steps, so no tokens", "job"),
    Rule("hang", "missing",
         "ranks that vanish during a hang went down with the hung job", "job", stops=True),
    Rule("missing", "job_stall",
         "in a synchronous job the live ranks wait for a dead one, their GPUs idle", "job",
         stops=True),
    Rule("missing", "throughput",
         "in a synchronous job no step ends without every rank, so no tokens", "job",
         stops=True),
    Rule("job_stall", "throughput", "a job whose GPUs idle makes fewer tokens", "job"),
)

Key = tuple[str, int | None]


@dataclass(frozen=True)
class Incident:
    """A root anomaly and the anomalies it explains, in the order they were given."""

    root: Anomaly
    explained: tuple[Anomaly, ...] = ()

    @property
    def members(self) -> tuple[Anomaly, ...]:
        return (self.root, *self.explained)

    @property
    def key(self) -> Key:
        return self.root.key

    @property
    def rank(self) -> int | None:
        return self.root.rank

    @property
    def pending(self) -> bool:
        """Pending while none of it is confirmed."""
        return all(a.pending for a in self.members)

    @property
    def severity(self) -> str:
        """The most severe of what is confirmed (of everything while all is pending): a
        critical consequence makes its root's row critical."""
        judged = [a for a in self.members if a.confirmed] or self.members
        return min((a.severity for a in judged), key=SEVERITIES.index)

    @property
    def order(self) -> tuple[int, int, float, int]:
        """Confirmed first, the most severe, the newest, by rank: a new problem is not
        buried under an old notice of the same severity."""
        return (int(self.pending), SEVERITIES.index(self.severity), -self.root.since,
                -1 if self.rank is None else self.rank)

    @property
    def headline(self) -> str:
        """"thermal → straggler 1.29x": the root, then each consequence with its size (a
        pending one marked ◌)."""
        folded = [f"◌ {a.label}" if a.pending else a.label for a in self.explained]
        return " → ".join([self.root.name, *folded])


def left_behind(anomaly: Anomaly, ranks: Collection[int]) -> bool:
    """``anomaly`` is a rank gone that the job steps on without (``ranks``): it stops
    nothing."""
    return anomaly.kind == "missing" and anomaly.rank in ranks


def explained_by(anomaly: Anomaly, active: Iterable[Anomaly],
                 rank_map: RankMap | None = None, behind: Collection[int] = ()
                 ) -> tuple[Anomaly, Rule] | None:
    """The active anomaly that directly explains ``anomaly``, and the rule; None for one
    nothing explains. ``behind``: the ranks the job was seen to step on without."""
    return _Causes(tuple(active), rank_map, behind).of(anomaly)


def incidents(anomalies: Sequence[Anomaly], rank_map: RankMap | None = None,
              behind: Collection[int] = ()) -> tuple[Incident, ...]:
    """The anomalies as incidents, one per root, most pressing first; ``behind`` as for
    ``explained_by``."""
    causes = _Causes(tuple(anomalies), rank_map, behind)
    roots: list[Anomaly] = []
    folded: dict[Key, list[tuple[int, Anomaly]]] = {}
    for anomaly in anomalies:
        chain = causes.chain(anomaly)
        if chain[-1] is anomaly:
            roots.append(anomaly)
        else:  # nearer causes before what they explain in turn: "missing → hang → stall"
            folded.setdefault(chain[-1].key, []).append((len(chain), anomaly))
    grouped = [Incident(root, tuple(a for _, a in sorted(folded.get(root.key, ()),
                                                         key=lambda pair: pair[0])))
               for root in roots]
    return tuple(sorted(grouped, key=lambda incident: incident.order))


class _Causes:
    """Which active anomaly explains which, looked up by kind and place."""

    def __init__(self, anomalies: tuple[Anomaly, ...], rank_map: RankMap | None,
                 behind: Collection[int] = ()) -> None:
        self.by_kind: dict[str, list[Anomaly]] = {}
        for anomaly in anomalies:
            self.by_kind.setdefault(anomaly.kind, []).append(anomaly)
        self.by_key = {anomaly.key: anomaly for anomaly in anomalies}
        self.rank_map = rank_map
        self.behind = frozenset(behind)

    def of(self, anomaly: Anomaly) -> tuple[Anomaly, Rule] | None:
        for rule in RULES:
            if rule.effect != anomaly.kind:
                continue
            if rule.scope == "rank":  # the one place to look: found at once among many
                cause = self.by_key.get((rule.cause, anomaly.rank))
                if (cause is not None and anomaly.rank is not None
                        and self._holds(rule, cause, anomaly)):
                    return cause, rule
                continue
            for cause in self.by_kind.get(rule.cause, ()):
                if (cause is not anomaly and self._placed(rule.scope, cause, anomaly)
                        and self._holds(rule, cause, anomaly)):
                    return cause, rule
        return None

    def _holds(self, rule: Rule, cause: Anomaly, effect: Anomaly) -> bool:
        """A rule of a stopped job does not hold for a rank the job stepped on without."""
        return not rule.stops or not (left_behind(cause, self.behind)
                                      or left_behind(effect, self.behind))

    def chain(self, anomaly: Anomaly) -> list[Anomaly]:
        """``anomaly``, what explains it, what explains that, … up to the first cause, its
        root (the chain is ``[anomaly]`` when nothing explains it). Where causes loop, the
        loop's most pressing member is the root, whichever member the chain starts from."""
        chain = [anomaly]
        while (found := self.of(chain[-1])) is not None:
            cause = found[0]
            if any(cause is seen for seen in chain):
                start = next(i for i, seen in enumerate(chain) if seen is cause)
                root = min(chain[start:], key=lambda a: (a.order, a.kind))
                return [*chain[:chain.index(root)], root]
            chain.append(cause)
        return chain

    def _placed(self, scope: str, cause: Anomaly, effect: Anomaly) -> bool:
        if scope == "job":
            return effect.rank is None or cause.rank != effect.rank
        if cause.rank is None or effect.rank is None:
            return False
        return self._node(cause.rank) == self._node(effect.rank) is not None

    def _node(self, rank: int) -> int | None:
        ranks = self.rank_map.ranks if self.rank_map is not None else ()
        return ranks[rank].node if rank < len(ranks) and ranks[rank].node >= 0 else None
