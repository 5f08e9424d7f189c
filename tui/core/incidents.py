"""Incidents: one root anomaly with what it explains folded under it, so that one rank's
faults take one row and more distinct problems fit before the panel scrolls.

The rules of what explains what are here and nowhere else. Each names a cause, the
consequence it explains on the same rank, and why. A consequence is never itself a cause,
so an incident is one level deep: a root and what it explains. An anomaly no active
anomaly explains is a root of its own. Folding hides nothing: a consequence is still named
on its root's row, and its own text stays on its rank's screen and in `ranktop report`.

Only rules within one rank are made: a job-wide consequence (the stall and throughput drop
a dead rank causes) would have no rank screen to keep its text on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ranktop.tui.core.anomaly import Anomaly
from ranktop.tui.core.domain import SEVERITIES


@dataclass(frozen=True)
class Rule:
    """``cause`` on a rank explains ``effect`` on the same rank."""

    cause: str  # an anomaly's kind
    effect: str
    why: str


RULES = (
    Rule("thermal", "straggler",
         "a GPU that throttles for heat computes slower, so its rank straggles"),
    Rule("ecc", "memory", "an uncorrectable ECC error is what remaps a row of memory"),
    Rule("ecc", "remap_failure",
         "an uncorrectable ECC error with no spare row left fails its remap"),
    Rule("xid", "missing", "the GPU reported an XID, then its rank's series vanished"),
    Rule("xid", "pcie", "a GPU falling off the bus replays its PCIe transfers"),
    Rule("nvlink_errors", "nvlink",
         "a link taking CRC errors retries and retrains, dragging its node's NVLink down"),
)


@dataclass(frozen=True)
class Incident:
    """A root anomaly and the anomalies it explains, in the order they were given."""

    root: Anomaly
    explained: tuple[Anomaly, ...] = ()

    @property
    def members(self) -> tuple[Anomaly, ...]:
        return (self.root, *self.explained)

    @property
    def key(self) -> tuple[str, int | None]:
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
        """As anomalies are ordered: confirmed first, the most severe, the oldest, by rank."""
        return (int(self.pending), SEVERITIES.index(self.severity), self.root.since,
                -1 if self.rank is None else self.rank)

    @property
    def headline(self) -> str:
        """"thermal → straggler 1.29x": the root, then each consequence with its size (a
        pending one marked ◌)."""
        folded = [f"◌ {a.label}" if a.pending else a.label for a in self.explained]
        return " → ".join([self.root.name, *folded])


def explained_by(anomaly: Anomaly, active: Iterable[Anomaly]) -> tuple[Anomaly, Rule] | None:
    """The active anomaly that explains ``anomaly``, and the rule; None for a root."""
    return _cause(anomaly, {a.key: a for a in active})


def incidents(anomalies: Sequence[Anomaly]) -> tuple[Incident, ...]:
    """The anomalies as incidents, one per root, most pressing first."""
    by_key = {a.key: a for a in anomalies}
    roots: list[Anomaly] = []
    folded: dict[tuple[str, int | None], list[Anomaly]] = {}
    for anomaly in anomalies:
        found = _cause(anomaly, by_key)
        if found is None:
            roots.append(anomaly)
        else:
            folded.setdefault(found[0].key, []).append(anomaly)
    grouped = [Incident(root, tuple(folded.get(root.key, ()))) for root in roots]
    return tuple(sorted(grouped, key=lambda incident: incident.order))


def _cause(anomaly: Anomaly, by_key: Mapping[tuple[str, int | None], Anomaly]
           ) -> tuple[Anomaly, Rule] | None:
    if anomaly.rank is None:
        return None
    for rule in RULES:
        cause = by_key.get((rule.cause, anomaly.rank)) if rule.effect == anomaly.kind else None
        if cause is not None:
            return cause, rule
    return None
