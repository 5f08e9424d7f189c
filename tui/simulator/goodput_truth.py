"""What the simulated job's goodput truly was: the yardstick for ranktop's own measure.

Over a window, the share of wall time that made progress is the integral of
``base step / pace`` (the pace: seconds per step then, infinite while hung or stalled); the
rest is lost, laid at the door of the fault active then: a dead rank or a collective hang,
a stall of the whole job, or else whatever made the step slower than the healthy one."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..core.detect.goodput import HANG, SLOWDOWN, STALL
from .cluster import TICKS_PER_SECOND, SimCluster

HANG_FAULTS = ("rank_death", "collective_hang")
STALL_FAULTS = ("job_stall",)


@dataclass(frozen=True)
class TrueGoodput:
    """The share of a window that made progress, and the seconds lost by cause."""

    share: float
    lost: Mapping[str, float] = field(default_factory=dict)


class GoodputTruth:
    """The true goodput of ``cluster`` over any window (seconds since the demo started),
    worked out tick by tick over one loop of its scenario, once."""

    def __init__(self, cluster: SimCluster) -> None:
        self.base = cluster.scenario.base_step_seconds
        self.loop = cluster.scenario.loop_seconds
        ticks = math.ceil(self.loop * TICKS_PER_SECOND)
        self._ticks = [self._tick(cluster, i / TICKS_PER_SECOND) for i in range(ticks)]

    def _tick(self, cluster: SimCluster, t: float) -> tuple[float, str | None]:
        """The share of a tick at ``t`` that made progress, and the cause of the rest."""
        pace = cluster.pace_at(t)
        effects = {f.effect for f in cluster.active_faults(t)}
        if effects.intersection(HANG_FAULTS):
            cause: str | None = HANG
        elif effects.intersection(STALL_FAULTS):
            cause = STALL
        else:
            cause = SLOWDOWN if pace > self.base * (1 + 1e-9) else None
        return min(1.0, self.base / pace), cause

    def over(self, start: float, end: float) -> TrueGoodput:
        """The true goodput from ``start`` to ``end``."""
        first, last = round(start * TICKS_PER_SECOND), round(end * TICKS_PER_SECOND)
        if last <= first:
            return TrueGoodput(math.nan)
        made, lost = 0.0, {}
        for tick in range(first, last):
            share, cause = self._ticks[tick % len(self._ticks)]
            made += share
            if cause is not None and share < 1.0:
                lost[cause] = lost.get(cause, 0.0) + (1.0 - share) / TICKS_PER_SECOND
        return TrueGoodput(made / (last - first), lost)
