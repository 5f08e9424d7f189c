"""Anomalies becoming history: each one's start and resolve, as events in the event log."""

from __future__ import annotations

from collections.abc import Sequence

from ranktop.tui.core.detect import Anomaly
from ranktop.tui.core.events import Event, EventLog
from ranktop.tui.core.model import RankMap


class Journal:
    """Turns each frame's active anomalies into start and resolve events, and keeps them."""

    def __init__(self, job: str, log: EventLog | None) -> None:
        self.job = job
        self.log = log
        self.active: dict[tuple[str, int | None], Anomaly] = {}

    def update(self, now: float, anomalies: Sequence[Anomaly], rank_map: RankMap
               ) -> list[Event]:
        """The events since the last frame, appended to the log (when there is one).
        Pending anomalies are not facts yet: only confirmed ones are journalled."""
        current = {a.key: a for a in anomalies if a.confirmed}
        started = [a for key, a in current.items() if key not in self.active]
        resolved = [a for key, a in self.active.items() if key not in current]
        self.active = current
        events = [self._event(a, "start", a.since, rank_map) for a in started]
        events += [self._event(a, "resolve", now, rank_map) for a in resolved]
        if events and self.log is not None:
            self.log.append(events)
        return events

    def _event(self, anomaly: Anomaly, state: str, when: float, rank_map: RankMap) -> Event:
        host, gpu = "", None
        if anomaly.rank is not None and anomaly.rank < len(rank_map):
            rank = rank_map.ranks[anomaly.rank]
            host, gpu = rank.host, rank.gpu
        return Event(time=when, state=state, kind=anomaly.kind, severity=anomaly.severity,
                     rank=anomaly.rank, host=host, gpu=gpu, job=self.job,
                     summary=anomaly.summary)
