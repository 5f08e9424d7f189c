"""The job's events as moments to go to: when each anomaly began (a death is a ``missing``
rank's start), when a restart's first rank died and when the job stepped again, so that
a past moment can step from one event to the next instead of one refresh at a time."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .anomaly import Anomaly
from .detect.restarts import Restart


def event_times(anomalies: Iterable[Anomaly], restarts: Iterable[Restart] = ()
                ) -> list[float]:
    """Each event's time, once, oldest first."""
    times = {anomaly.since for anomaly in anomalies}
    for restart in restarts:
        times.update((restart.died, restart.resumed))
    return sorted(t for t in times if math.isfinite(t))


def shown_at(event: float, step: float) -> float:
    """The first moment of the refresh grid that shows an event of ``event``."""
    return math.ceil(event / step) * step


def next_event(times: Iterable[float], moment: float, step: float, direction: int
               ) -> float | None:
    """The moment showing the first event after ``moment`` (``direction`` 1) or the last
    before it (-1), on the refresh grid of ``step``; None when there is none."""
    moments = sorted({shown_at(t, step) for t in times})
    if direction > 0:
        return next((m for m in moments if m > moment), None)
    return next((m for m in reversed(moments) if m < moment), None)
