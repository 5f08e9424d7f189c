"""A frozen rank: alive, silent in its log, and the rank the others wait for.

When every other live rank has logged a watchdog timeout and a few have not, those few have
either not timed out *yet* (their watchdog fires a moment later) or never will: a process
frozen outside NCCL (stuck in I/O, deadlocked in Python) never joined the collective, so it
has nothing to time out in. Two things tell the frozen rank, each named with the verdict:

- **Its GPU idles while the others' spin.** A rank waiting in a collective runs NCCL's
  kernels (a few percent of SM activity and up); a frozen one runs nothing. Seen at any
  poll while the job stands still, even before a watchdog fires: until the logs agree it is
  only a suspicion, shown pending on that rank.
- **Time.** It is still the only one without a timeout ``FROZEN_AFTER_SECONDS`` after the
  logs first showed every other live rank timed out. Watchdogs fire at the same timeout on
  every rank, a moment apart as the ranks entered the collective; a rank this much later
  never entered it. This needs no GPU metric.

Only a few ranks (``AT_MOST``) are ever named this way: more than that idle or silent is
something else (a stall of the whole job, logs not configured for them). Nor when no rank
timed out, every one that spoke having given up on a peer gone: a rank died (a frozen one
keeps its connections open, so its peers time out), and the silent ones may be bystanders
their launcher ended before they could say anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import median

from ..model import Frame, is_missing
from .triage import HangVerdict

AT_MOST = 8  # ranks named frozen at once: a node's GPUs
SPIN_FLOOR = 4.0  # % SM activity: the waiting ranks' median spins at least this much
IDLE_SHARE = 0.25  # an idle GPU's SM activity is at most this share of the spinning median
FROZEN_AFTER_SECONDS = 10.0  # still no timeout this long after all the others': frozen


@dataclass(frozen=True)
class IdleGpu:
    """A GPU seen idle while the others spun in a collective."""

    rank: int
    sm: float  # its SM activity, %
    others: float  # the other live ranks' median, %
    since: float  # when it was first seen so


class FrozenRanks:
    """What one hang has shown of frozen ranks: idle GPUs, and ranks long without a timeout."""

    def __init__(self) -> None:
        self.idle: dict[int, IdleGpu] = {}
        self._awaited: tuple[tuple[int, ...], float] | None = None  # and since when

    def reset(self) -> None:
        """The hang is over: what it showed is of no later one."""
        self.idle.clear()
        self._awaited = None

    def observe(self, frame: Frame) -> None:
        """Note the GPUs idle among spinning ones in this frame of a job standing still."""
        for gpu in idle_gpus(frame.values.get("sm_active", ()), frame.time):
            self.idle.setdefault(gpu.rank, gpu)

    def suspects(self) -> list[IdleGpu]:
        """The idle GPUs seen in this hang, when few enough to mean something."""
        return list(self.idle.values()) if len(self.idle) <= AT_MOST else []

    def judge(self, verdict: HangVerdict | None) -> HangVerdict | None:
        """``verdict``, naming the ranks it awaits when they are frozen."""
        if verdict is None or verdict.sure or not _awaits_few_read(verdict):
            self._awaited = None
            return verdict
        awaited = tuple(verdict.awaited)
        read_at = verdict.as_of if verdict.as_of is not None else 0.0
        if self._awaited is None or self._awaited[0] != awaited:
            self._awaited = (awaited, read_at)
        idle = {gpu.rank: gpu for gpu in self.suspects()}
        if all(rank in idle for rank in awaited):
            return _named(verdict, [_idle_words(idle[rank]) for rank in awaited])
        waited = read_at - self._awaited[1]
        if waited >= FROZEN_AFTER_SECONDS:
            return _named(verdict, [f"still none {waited:.0f} s after the others'"] * len(awaited))
        return verdict


def idle_gpus(sm: Sequence[float], now: float) -> list[IdleGpu]:
    """Live ranks whose GPU idles while most spin (none when all idle or too many do)."""
    present = [(rank, value) for rank, value in enumerate(sm) if not is_missing(value)]
    if len(present) < 2:
        return []
    spinning = median(value for _, value in present)
    if spinning < SPIN_FLOOR:
        return []
    idle = [IdleGpu(rank, value, spinning, now) for rank, value in present
            if value <= IDLE_SHARE * spinning]
    return idle if len(idle) <= AT_MOST else []


def _awaits_few_read(verdict: HangVerdict) -> bool:
    """Every other live rank reported, some of them a timeout, and the few it awaits have
    logs that were read. When every one that reported gave up on a peer gone, a rank died:
    the others' sockets closed at once, and the silent ones may have been ended by their
    launcher before they could say anything (torchrun ends a node's workers on a failure)."""
    silent = set(verdict.silent)
    awaited = verdict.awaited
    return (bool(awaited) and len(awaited) <= AT_MOST and verdict.complete
            and all(rank in silent for rank in awaited)
            and len(verdict.gave_up) < len(verdict.reporting))


def _named(verdict: HangVerdict, reasons: list[str]) -> HangVerdict:
    ranks = verdict.awaited
    others = f"the other {len(verdict.reporting)} live ranks did"
    if len(ranks) == 1:
        who = f"rank {ranks[0]} is frozen, the others wait for it: it"
        why = reasons[0]
    elif len(set(reasons)) == 1:
        who = f"ranks {', '.join(map(str, ranks))} are frozen, the others wait for them: they"
        why = f"each {reasons[0]}"
    else:
        who = f"ranks {', '.join(map(str, ranks))} are frozen, the others wait for them: they"
        why = "; ".join(f"rank {rank}: {reason}" for rank, reason in zip(ranks, reasons,
                                                                          strict=True))
    summary = f"{who} logged no timeout{verdict.work}, {others}; {why}"
    return replace(verdict, sure=True, behind=list(ranks), awaiting="", summary=summary)


def _idle_words(gpu: IdleGpu) -> str:
    return (f"its GPU is idle (SM {gpu.sm:.0f} %, theirs {gpu.others:.0f} %: they spin in"
            " the collective, it never joined)")
