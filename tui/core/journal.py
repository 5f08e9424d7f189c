"""Anomalies becoming history: each one's start and resolve, as events in the event log."""

from __future__ import annotations

from collections.abc import Sequence

from ranktop.tui.core.detect import Anomaly
from ranktop.tui.core.events import Event, EventLog
from ranktop.tui.core.model import RankMap

# Kinds whose verdict can change its mind about where the fault is.
CORRECTABLE = frozenset({"hang"})


class Journal:
    """Turns each frame's active anomalies into start and resolve events, and keeps them."""

    def __init__(self, job: str, log: EventLog | None) -> None:
        self.job = job
        self.log = log
        self.active: dict[tuple[str, int | None], Anomaly] = {}

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
        if events and self.log is not None:
            self.log.append(events)
        return events

    def _event(self, anomaly: Anomaly, state: str, when: float, rank_map: RankMap,
               prefix: str = "") -> Event:
        host, gpu = "", None
        if anomaly.rank is not None and anomaly.rank < len(rank_map):
            rank = rank_map.ranks[anomaly.rank]
            host, gpu = rank.host, rank.gpu
        return Event(time=when, state=state, kind=anomaly.kind, severity=anomaly.severity,
                     rank=anomaly.rank, host=host, gpu=gpu, job=self.job,
                     summary=prefix + anomaly.summary)


def _where(anomaly: Anomaly) -> str:
    return "the whole job" if anomaly.rank is None else f"rank {anomaly.rank}"
