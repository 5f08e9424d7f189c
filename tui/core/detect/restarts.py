"""Restarts on record: the job's ranks vanished (one died and took its group down), then the
job stepped again, usually from an earlier checkpoint (its step counter went back), else
from where it stood still while they were gone.

Once the job steps again every anomaly of the outage ends, so without a record the screen
would say "no anomalies" two seconds after a restart. ``RestartWatch`` keeps one
``Restart`` per restart for the goodput hour (or until dismissed): who died first, when,
the step the job resumed from, and what the restart cost.

Who died is the rank whose series vanished first (the last poll that saw it is the
earliest); where several vanished in the same poll, the one a verdict of the outage named
(the hang's culprit), then the one that had a hardware fault, then the lowest.
GPU-hours lost = (seconds from the death to the resumption + steps done again x a healthy
step's seconds) x GPUs / 3600.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..anomaly import Anomaly
from ..model import is_missing
from ..moment import shown
from ..text import ranks_named
from .down import DownRank
from .goodput import HOUR_SECONDS
from .lateness import NO_PROGRESS_SECONDS

KIND = "restart"
TOGETHER_SECONDS = 1.0  # series last seen within this of the first went down with it


@dataclass(frozen=True)
class Restart:
    """One restart of the job: who died (None: unknown) and when, when the job stepped
    again, from which step, which attempt it is, and what it cost (None: unknown)."""

    rank: int | None
    died: float  # when the first rank's series vanished (the resumption's time if unknown)
    resumed: float  # the first poll with every rank back and the step known again
    from_step: int  # the checkpoint's, where known, else the first step seen back
    attempt: int
    steps_lost: int | None
    gpu_hours_lost: float | None
    fault: str = ""  # the dead rank's last hardware fault, where it had one
    # ranks gone together that no evidence told apart (rank is then None): who died first
    # is one of them
    together: tuple[int, ...] = ()
    exited: bool = False  # an exit was seen (a verdict's dead rank, a hardware fault)

    @property
    def summary(self) -> str:
        """"rank 2 died at 12:22:28 · the job restarted from step 250 at 12:22:58 (attempt
        1) · 11 steps and 3.4 GPU-hours lost"."""
        how = f" ({self.fault})" if self.fault else ""
        if self.rank is not None:
            went = "died" if self.exited else "went down first"
            death = f"rank {self.rank} {went}{how} at {shown(self.died)}"
        elif self.together:
            death = (f"{ranks_named(self.together)} went down together at "
                     f"{shown(self.died)} (which died first: not told apart)")
        else:
            death = f"the job stopped after {shown(self.died)} (who died: not seen)"
        restarted = (f"the job restarted from step {self.from_step:,} at "
                     f"{shown(self.resumed)} (attempt {self.attempt})")
        return " · ".join((death, restarted, self._lost()))

    def _lost(self) -> str:
        if self.steps_lost is None:
            return "steps lost: unknown"
        steps = f"{self.steps_lost:,} step{'' if self.steps_lost == 1 else 's'}"
        if self.gpu_hours_lost is None:
            return f"{steps} lost"
        return f"{steps} and {self.gpu_hours_lost:,.1f} GPU-hours lost"

    @property
    def anomaly(self) -> Anomaly:
        """The restart as a resolved anomaly of its own (since: the death)."""
        return Anomaly(KIND, "warning", self.rank, self.summary, self.died,
                       held=self.resumed - self.died, figure=f"#{self.attempt}")

    @property
    def key(self) -> tuple[float, int]:
        return self.resumed, self.attempt


class RestartWatch:
    """Fed every poll; keeps the restarts of the last hour that were not dismissed."""

    def __init__(self) -> None:
        self.restarts: list[Restart] = []
        self._dismissed: set[tuple[float, int]] = set()
        self._high = -math.inf  # the highest step seen
        self._gone: dict[int, DownRank] = {}  # the ranks down since the outage began
        self._named: list[int] = []  # ranks a verdict named during the outage
        self._dead: set[int] = set()  # ranks a verdict saw exit during the outage
        self._attempts = 0
        self._step = math.nan  # the job's step, and when it last changed
        self._moved_at: float | None = None
        self._moved_before: float | None = None  # when it changed the time before that
        self._stood = False  # the job stood still while ranks were gone
        self._checkpoint = math.nan  # the job's last checkpoint step before they went
        self._last_time: float | None = None  # the seed's last point

    def update(self, now: float, step: float, down: Mapping[int, DownRank],
               named: Sequence[int] = (), step_seconds: float = math.nan,
               gpus: int = 0, checkpoint: float = math.nan, dead: Sequence[int] = ()
               ) -> tuple[Restart, ...]:
        """The restarts on record after this poll: ``step`` the job's (NaN: absent),
        ``down`` the ranks down now, ``named`` the ranks a verdict blames now,
        ``checkpoint`` the step of the job's last checkpoint (NaN: unknown)."""
        if not is_missing(checkpoint) and not self._gone:
            self._checkpoint = checkpoint  # the last one saved before the ranks went
        for rank, gone in down.items():
            self._gone.setdefault(rank, gone)
        self._named += [rank for rank in named if rank not in self._named]
        self._dead.update(dead)
        if not is_missing(step) and step != self._step:
            self._moved_before = self._moved_at
            self._step, self._moved_at = step, now
        # The job stood still while ranks were gone: what follows their return is a restart
        # (from a checkpoint, or from where it stood); a job that stepped on without them
        # lost ranks for a while, not its run.
        if self._gone and self._moved_at is not None \
                and now - self._moved_at >= NO_PROGRESS_SECONDS:
            self._stood = True
        if is_missing(step):
            return self.current(now)
        if down:  # the step a rank's death leaves the job at (one may end as it unwinds)
            self._high = max(self._high, step)
            return self.current(now)
        if step < self._high or (self._stood and self._moved_at == now):  # stepping again
            self._record(now, step, step_seconds, gpus)
        elif self._gone and not self._stood:  # it stepped on without them
            self._gone, self._named, self._dead = {}, [], set()
        self._high = max(self._high, step)
        return self.current(now)

    def seed(self, steps: Sequence[tuple[float, float]]) -> None:
        """The job's step counter before the first poll (the source's past, oldest first):
        each time it went back is a restart on record, with who died unknown there."""
        for when, step in steps:
            if step < self._high:
                died = self._last_time if self._last_time is not None else when
                self._attempts += 1
                self.restarts.append(Restart(None, died, when, int(step), self._attempts,
                                             int(self._high - step), None))
                self._high = step
            self._high = max(self._high, step)
            self._last_time = when

    def current(self, now: float) -> tuple[Restart, ...]:
        """The restarts of the last hour not dismissed, newest first."""
        self.restarts = [r for r in self.restarts if r.resumed > now - HOUR_SECONDS]
        return tuple(r for r in reversed(self.restarts) if r.key not in self._dismissed)

    def dismiss(self, restart: Restart) -> None:
        self._dismissed.add(restart.key)

    def _record(self, now: float, step: float, step_seconds: float, gpus: int) -> None:
        first, together = _first_gone(self._gone, self._named)
        # with no rank seen going (they were gone before the first poll), the job stopped
        # after the last poll that saw it step, not when it stepped again
        stopped = self._moved_before if self._moved_before is not None else now
        died = (first.since if first is not None
                else min((self._gone[r].since for r in together), default=stopped))
        # resumed from the last checkpoint before the death, where the first step back
        # is past it; else from the step it went back to, or the one it stood at
        known = not is_missing(self._checkpoint) and self._checkpoint <= step
        start = int(self._checkpoint) if known else int(min(step, self._high))
        lost = None if self._high == -math.inf else max(0, int(self._high) - start)
        gpu_hours = None
        if lost is not None and not is_missing(step_seconds) and gpus:
            gpu_hours = (now - died + lost * step_seconds) * gpus / HOUR_SECONDS
        self._attempts += 1
        exited = first is not None and (bool(first.fault) or first.rank in self._dead)
        self.restarts.append(Restart(
            first.rank if first is not None else None, died, now, start, self._attempts,
            lost, gpu_hours, first.fault if first is not None else "", together, exited))
        self._gone, self._named, self._dead, self._stood = {}, [], set(), False
        self._high = step  # the steps done again from here are this restart's, not another's


def _first_gone(gone: Mapping[int, DownRank], named: Sequence[int]
                ) -> tuple[DownRank | None, tuple[int, ...]]:
    """The rank whose series vanished first, or, where several went within a scrape or two
    of the first (one death takes its group down in seconds, and targets are scraped at
    their own offsets), the one evidence names: the first a verdict names, else the one
    with a hardware fault. With
    none, no rank is claimed: the ranks gone together are given instead."""
    if not gone:
        return None, ()
    first = min(g.last_seen for g in gone.values())
    together = sorted((g for g in gone.values() if g.last_seen < first + TOGETHER_SECONDS),
                      key=lambda g: g.rank)
    if len(together) == 1:
        return together[0], ()
    by_rank = {g.rank: g for g in together}
    for rank in named:  # in the order the verdict gives them: its culprits first
        if rank in by_rank:
            return by_rank[rank], ()
    faulty = [g for g in together if g.fault]
    if len(faulty) == 1:
        return faulty[0], ()
    return None, tuple(g.rank for g in together)
