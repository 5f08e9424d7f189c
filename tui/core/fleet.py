"""The jobs list's verdicts: which job is paging, worst first.

A job's facts (what the fleet's aggregated queries said of it) give it one verdict, in the
order the on-call engineer looks: stalled (its step counter made no step in the progress
window), ranks missing (fewer ranks report than it had in the last hour), critical alerts
firing, then anything else wrong (an erroring or hot GPU, a straggler, warnings). Within a
verdict, and among the healthy, the lower goodput comes first. A healthy job is never above
an unhealthy one.

What the queries did not answer is unknown, never healthy-by-default nor a fault: a job whose
step counter is unknown is not called stalled.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from .moment import ago

CRITICAL, WARNING = "critical", "warning"
DEFAULT_HOT_C = 82.0  # [detect] temperature_c
DEFAULT_STRAGGLER = 1.10  # [detect] straggler_factor


class Verdict(IntEnum):
    """Worst first: the sort order of the list."""

    STALLED = 0
    MISSING = 1
    CRITICAL = 2
    TROUBLED = 3
    HEALTHY = 4


@dataclass(frozen=True)
class JobFacts:
    """What the fleet's queries said of one job (None: not answered, or not exported)."""

    name: str
    ranks_up: int | None = None
    ranks_expected: int | None = None  # ranks seen in the last hour
    steps: float | None = None  # steps made in the progress window
    window_full: bool = True  # its step counter is older than the window
    advanced: float | None = None  # when it last made a step (Unix seconds, to a window)
    goodput: float | None = None  # share 0..1 of the last hour spent advancing
    hottest_c: float | None = None
    xid_gpus: int = 0
    ecc_gpus: int = 0
    straggler: float | None = None  # slowest rank's compute time over the median's
    alerts: Mapping[str, int] = field(default_factory=dict)  # severity -> firing
    owner: str = ""
    shared: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # node -> other jobs


@dataclass(frozen=True)
class Limits:
    """Where a figure turns into a fault (the [detect] thresholds)."""

    hot_c: float = DEFAULT_HOT_C
    straggler: float = DEFAULT_STRAGGLER
    progress_seconds: float = 120.0


@dataclass(frozen=True)
class JobRow:
    """One row of the list: the facts and the verdict they give."""

    facts: JobFacts
    verdict: Verdict
    worst: str  # the worst thing the list can tell, in words ("" when healthy)
    stalled_seconds: float | None  # how long it has made no step, where stalled
    next_worst: str = ""  # the second worst, in words ("" when there is none)

    @property
    def healthy(self) -> bool:
        return self.verdict is Verdict.HEALTHY

    @property
    def missing(self) -> int:
        f = self.facts
        if f.ranks_up is None or f.ranks_expected is None:
            return 0
        return max(0, f.ranks_expected - f.ranks_up)


def judge(facts: JobFacts, now: float, limits: Limits = Limits()) -> JobRow:
    """The job's verdict and the words for its worst fault and the one after it."""
    faults = _faults(facts, now, limits)
    verdict, worst = faults[0] if faults else (Verdict.HEALTHY, "")
    stalled = _stalled_seconds(facts, now, limits) if verdict is Verdict.STALLED else None
    next_worst = faults[1][1] if len(faults) > 1 else ""
    return JobRow(facts, verdict, worst, stalled, next_worst)


def ranked(jobs: Iterable[JobFacts], now: float, limits: Limits = Limits()) -> list[JobRow]:
    """Every job judged, worst first; ties by lower goodput, then by name."""
    return sorted((judge(facts, now, limits) for facts in jobs), key=sort_key)


def sort_key(row: JobRow) -> tuple:
    goodput = row.facts.goodput
    known = goodput is not None and math.isfinite(goodput)
    return (row.verdict, not known, goodput if known else 0.0, row.facts.name)


def unhealthy(rows: Iterable[JobRow]) -> int:
    return sum(not row.healthy for row in rows)


def _faults(f: JobFacts, now: float, limits: Limits) -> list[tuple[Verdict, str]]:
    """Every fault the facts show, worst first."""
    faults: list[tuple[Verdict, str]] = []
    if f.steps is not None and f.steps <= 0 and f.window_full \
            and (f.ranks_up or f.ranks_expected):
        faults.append((Verdict.STALLED, _stalled_words(f, now, limits)))
    if f.ranks_expected is not None and f.ranks_up is not None \
            and f.ranks_up < f.ranks_expected:
        lost = f.ranks_expected - f.ranks_up
        faults.append((Verdict.MISSING, f"{lost} rank{'s' * (lost != 1)} missing"))
    critical = f.alerts.get(CRITICAL, 0)
    if critical:
        faults.append((Verdict.CRITICAL, f"{critical} critical alert{'s' * (critical != 1)}"))
    faults += [(Verdict.TROUBLED, words) for words in _troubles(f, limits)]
    return faults


def _troubles(f: JobFacts, limits: Limits) -> list[str]:
    found = []
    if f.xid_gpus:
        found.append(f"XID on {_gpus(f.xid_gpus)}")
    if f.ecc_gpus:
        found.append(f"ECC errors on {_gpus(f.ecc_gpus)}")
    if f.hottest_c is not None and math.isfinite(f.hottest_c) and f.hottest_c > limits.hot_c:
        found.append(f"GPU at {f.hottest_c:.0f} °C")
    if f.straggler is not None and math.isfinite(f.straggler) \
            and f.straggler >= limits.straggler:
        found.append(f"straggler ×{f.straggler:.2f}")
    warnings = f.alerts.get(WARNING, 0)
    if warnings:
        found.append(f"{warnings} warning{'s' * (warnings != 1)}")
    return found


def _gpus(count: int) -> str:
    return f"{count} GPU{'s' * (count != 1)}"


def _stalled_seconds(f: JobFacts, now: float, limits: Limits) -> float:
    """Since its last step: at least the progress window; from the last advance where the
    hour shows one (the window that saw it ended a window's length after the step)."""
    if f.advanced is None or not math.isfinite(f.advanced):
        return limits.progress_seconds
    return max(limits.progress_seconds, now - (f.advanced - limits.progress_seconds))


def _stalled_words(f: JobFacts, now: float, limits: Limits) -> str:
    seconds = _stalled_seconds(f, now, limits)
    known = f.advanced is not None and math.isfinite(f.advanced)
    return f"stalled {ago(seconds)}" if known else f"stalled ≥ {ago(seconds)}"
