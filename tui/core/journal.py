"""Anomalies becoming history: each one's start and resolve, as events in the event log.

A poll's events are bounded: when more than ``MAX_RANK_EVENTS`` ranks start (or resolve)
the same anomaly at once, as when one answer names 100,000 ranks that were never there,
they are one job-wide event that says how many ranks and which, not one event a rank.
"""

from __future__ import annotations

from collections.abc import Sequence

from .detect.detectors import Anomaly
from .events import Event, EventLog
from .model import RankMap

# Kinds whose verdict can change its mind about where the fault is.
CORRECTABLE = frozenset({"hang"})
MAX_RANK_EVENTS = 64  # events of one kind and state a poll, past which they are one
SHOWN_RANKS = 8


PARTIAL_KIND = "partial_answer"  # the event of a backend answering in part

class Journal:
    """Turns each frame's active anomalies into start and resolve events, and keeps them."""

    def __init__(self, job: str, log: EventLog | None) -> None:
        self.job = job
        self.log = log
        self.active: dict[tuple[str, int | None], Anomaly] = {}
        self.partial: tuple[str, ...] = ()  # why the backend's answers lack series, as logged

    def update(self, now: float, anomalies: Sequence[Anomaly], rank_map: RankMap
               ) -> list[Event]:
        """The events since the last frame, appended to the log (when there is one).

        Pending anomalies are not facts yet: only confirmed ones are journalled. A verdict
        that changes its mind (the hang's culprit) is a correction of the earlier one: the
        new one is journalled as ``correct`` and the old one as ``retract``, never as a
        second fact beside the first.
        """
        current = {a.key: a for a in anomalies if a.confirmed}
        started = [a for key, a in current.items() if key not in self.active]
        resolved = [a for key, a in self.active.items() if key not in current]
        self.active = current
        corrected = {a.kind for a in started} & {a.kind for a in resolved} & CORRECTABLE
        events = []
        for anomaly in started:
            if anomaly.kind in corrected:
                earlier = ", ".join(_where(a) for a in resolved if a.kind == anomaly.kind)
                events.append(self._event(anomaly, "correct", now, rank_map,
                                          f"corrects the earlier verdict ({earlier}): "))
            else:
                events.append(self._event(anomaly, "start", anomaly.since, rank_map))
        for anomaly in resolved:
            state = "retract" if anomaly.kind in corrected else "resolve"
            events.append(self._event(anomaly, state, now, rank_map))
        events = coalesced(events)
        if events and self.log is not None:
            self.log.append(events)
        return events

    def backend(self, now: float, partial: tuple[str, ...]) -> list[Event]:
        """An event when the backend's answers turn partial, change why, or are whole
        again: once per change, never once per poll."""
        if partial == self.partial:
            return []
        state = "start" if partial else "resolve"
        why = partial or self.partial
        self.partial = partial
        summary = (f"the backend's answers are partial ({why[0]}): ranks left out are not "
                   "known, not down" if partial else "the backend's answers are whole again")
        event = Event(time=now, state=state, kind=PARTIAL_KIND, severity="warning", rank=None,
                      host="", gpu=None, job=self.job, summary=summary)
        if self.log is not None:
            self.log.append([event])
        return [event]

    def _event(self, anomaly: Anomaly, state: str, when: float, rank_map: RankMap,
               prefix: str = "") -> Event:
        host, gpu = "", None
        if anomaly.rank is not None and anomaly.rank < len(rank_map):
            rank = rank_map.ranks[anomaly.rank]
            host, gpu = rank.host, rank.gpu if rank.gpu_named else None  # no GPU seen: none
        return Event(time=when, state=state, kind=anomaly.kind, severity=anomaly.severity,
                     rank=anomaly.rank, host=host, gpu=gpu, job=self.job,
                     summary=prefix + anomaly.summary)


def _where(anomaly: Anomaly) -> str:
    return "the whole job" if anomaly.rank is None else f"rank {anomaly.rank}"


def coalesced(events: list[Event]) -> list[Event]:
    """``events``, where more than MAX_RANK_EVENTS ranks share a kind, state and severity,
    with those made one job-wide event in the place of the first."""
    groups: dict[tuple[str, str, str], list[Event]] = {}
    for event in events:
        if event.rank is not None:
            groups.setdefault((event.kind, event.state, event.severity), []).append(event)
    large = {key: group for key, group in groups.items() if len(group) > MAX_RANK_EVENTS}
    if not large:
        return events
    kept = []
    for event in events:
        group = large.get((event.kind, event.state, event.severity))
        if group is None or event.rank is None:
            kept.append(event)
        elif event is group[0]:
            kept.append(_one_for(group))
    return kept


def _one_for(group: list[Event]) -> Event:
    first = group[0]
    ranks = ", ".join(str(e.rank) for e in group[:SHOWN_RANKS])
    more = f" and {len(group) - SHOWN_RANKS} more" if len(group) > SHOWN_RANKS else ""
    return Event(time=min(e.time for e in group), state=first.state, kind=first.kind,
                 severity=first.severity, rank=None, host="", gpu=None, job=first.job,
                 summary=f"{len(group)} ranks at once (ranks {ranks}{more}); the first: "
                         f"{first.summary}", source=first.source)
