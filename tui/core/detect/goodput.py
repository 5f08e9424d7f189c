"""Goodput: the share of wall time the job spent making progress, and where the rest went.

Measured from the job's step counter and the anomalies alone, nothing in the job itself.
Each interval between two frames made ``steps advanced x baseline step`` seconds of
progress (``baseline.py`` says what a healthy step takes); the rest of the interval is
lost, and laid at the door of the cause active then: a hang or a dead rank, a stall of the
whole job, a slowdown (stragglers, heat, fail-slow, a bad link), or a restart (the step
counter went back to a checkpoint, and the steps done again make no progress; or it is
absent). Detectors confirm a condition after it began: when an anomaly shows up, the
intervals since it began are laid at its door too (a stronger cause wins).

The ledger keeps an entry per frame over the last minutes and one per minute and cause
before them, to the hour (bounded), and totals since it began. Where the source keeps a
past, ``seed`` fills the hour before the first frame from the step counter alone (causes
there are unknown, but for restarts), and ``seed_job`` the job's time before that from a
coarser look further back, where its start is within the backend's history."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, pairwise

from ..model import is_missing
from .baseline import StepBaseline
from .detectors import Anomaly

HOUR_SECONDS = 3600.0
# Causes, strongest first: an interval that two explain is laid at the stronger's door.
RESTART, HANG, STALL, SLOWDOWN, UNKNOWN = "restart", "hang", "stall", "slowdown", "unknown"
CAUSES = (RESTART, HANG, STALL, SLOWDOWN, UNKNOWN)
STOPPING = (HANG, STALL)  # causes that stop the step counter
CAUSE_OF_KIND = {
    "hang": HANG, "missing": HANG,
    "job_stall": STALL,
    "straggler": SLOWDOWN, "thermal": SLOWDOWN, "fail_slow": SLOWDOWN, "nvlink": SLOWDOWN,
    "sm_stall": SLOWDOWN, "throughput": SLOWDOWN,
}
SEED_STEP_SECONDS = 20.0  # the resolution of the hour before the first frame, where seeded
# Where the job began before that hour, it is looked for this far back, this coarsely.
JOB_LOOKBACK_SECONDS = 14 * 24 * HOUR_SECONDS
JOB_LOOKBACK_STEP_SECONDS = 600.0
RECENT_SECONDS = 600.0  # frames are kept one by one this long, then ...
BUCKET_SECONDS = 60.0  # ... those of the same cause within a minute as one entry
MOST_ENTRIES = 6_000  # the recent frames at a poll every 0.1 s: memory bounded, whatever
COVERED_SLACK_SECONDS = 60.0  # an hour covered to within a minute is the whole hour


@dataclass(frozen=True)
class Goodput:
    """The job's goodput: shares 0..1, NaN where unknown. ``lost``: seconds of the last hour
    lost, by cause (``CAUSES``). ``covered``: how much of the last hour the figures cover
    (a late start without a past covers only what it watched)."""

    hour: float = math.nan
    since_start: float = math.nan  # since ranktop began watching (its catch-up included)
    job: float = math.nan  # since the job began, where the source's past reaches back to it
    lost: Mapping[str, float] = field(default_factory=dict)
    baseline_step: float = math.nan  # the healthy step's seconds, measured against
    covered: float = 0.0  # seconds of the last hour
    watched: float = 0.0  # seconds since ranktop began watching
    job_began: float | None = None  # when the job began, where known
    settled: bool = True  # its baseline stands on a calm minute or on the source's past

    @property
    def known(self) -> bool:
        """Figures worth showing: none before a calm minute (or the source's past) says
        what a healthy step takes."""
        return self.settled and not math.isnan(self.hour)

    @property
    def whole_hour(self) -> bool:
        return self.covered >= HOUR_SECONDS - COVERED_SLACK_SECONDS


class _Entry:
    """One interval between two frames: its wall time, the new steps in it, and whose door
    its lost time is laid at (None: nothing explains it yet)."""

    __slots__ = ("cause", "end", "fixed", "start", "steps")

    def __init__(self, start: float, end: float, steps: float, cause: str | None,
                 fixed: bool) -> None:
        self.start, self.end, self.steps = start, end, steps
        self.cause, self.fixed = cause, fixed  # fixed: a restart, which no anomaly overrides

    @property
    def wall(self) -> float:
        return self.end - self.start


class _Totals:
    """Wall seconds and new steps, summed."""

    __slots__ = ("steps", "wall")

    def __init__(self) -> None:
        self.wall, self.steps = 0.0, 0.0

    def add(self, entry: _Entry, sign: float = 1.0) -> None:
        self.wall += sign * entry.wall
        self.steps += sign * entry.steps

    def share(self, baseline: float) -> float:
        if self.wall <= 0 or math.isnan(baseline):
            return math.nan
        return min(1.0, max(0.0, self.steps * baseline / self.wall))


class GoodputLedger:
    """Fed each frame's time, the job's step, the active anomalies and the median step
    time; says the goodput at any moment since (``value``)."""

    def __init__(self) -> None:
        self.baseline = StepBaseline()
        self._recent: deque[_Entry] = deque()  # a frame each, over the last minutes
        self._folded: deque[_Entry] = deque()  # a minute and cause each, before them
        self._hour: dict[str | None, _Totals] = {}  # by cause, over the entries kept
        self._fed = _Totals()  # since the first frame fed
        self._seeded = _Totals()  # the past seeded before it
        self._before = _Totals()  # the job's time before that, where its start is known
        self._seed_first: tuple[float, float] | None = None  # the seed's first (time, step)
        self._last: tuple[float, float | None] | None = None  # (time, step) of the last frame
        self._cause: str | None = None  # the last frame's
        self._high = -math.inf  # the highest step seen: below it, steps are done again
        self._fed_since: float | None = None
        self.job_began: float | None = None
        self._began_with_first = False

    # -- feeding -------------------------------------------------------------------------

    def feed(self, now: float, step: float, anomalies: Sequence[Anomaly],
             step_seconds: float = math.nan) -> None:
        """One frame: ``step`` NaN where the job's counter is absent."""
        first = self._fed_since is None
        if first:
            self._fed_since = now
            if self._began_with_first:
                self.job_began = now
        cause = strongest(CAUSE_OF_KIND.get(a.kind) for a in anomalies)
        # An interval at whose end a condition was gone held it at its start.
        held, self._cause = strongest((cause, self._cause)), cause
        entry = self._advance(now, None if is_missing(step) else step, held)
        if entry is None:
            return
        (self._seeded if first else self._fed).add(entry)  # from the seed's last point
        self._lay_back(anomalies)
        calm = cause is None and entry.cause is None and entry.steps > 0
        if calm:
            self.baseline.calm(now, step_seconds, entry.wall, entry.steps)

    def seed(self, steps: Sequence[tuple[float, float]], start: float) -> None:
        """The job's step counter since ``start`` (the source's past, oldest first), before
        any frame is fed. A counter whose first value comes well after ``start`` tells when
        the job began."""
        if self._last is not None:
            return
        if not steps:  # the source holds nothing before: the job begins with the first frame
            self._began_with_first = True
            return
        interval = _typical_interval(steps)
        if steps[0][0] > start + 2 * interval:
            self.job_began = steps[0][0]
        self.baseline.seed(steps)
        self._seed_first = steps[0]
        for when, step in steps:
            entry = self._advance(when, step, None)
            if entry is not None:
                self._seeded.add(entry)

    @property
    def job_older_than_seed(self) -> bool:
        """Whether the job was already running when the seeded past begins."""
        return self._seed_first is not None and self.job_began is None

    def seed_job(self, steps: Sequence[tuple[float, float]], start: float) -> None:
        """The step counter's coarse past since ``start``, up to the seeded hour: where it
        begins after ``start``, the job began then, and its time up to the hour counts in
        the goodput since it began (the backend's history reaches back to it)."""
        first = self._seed_first
        if not self.job_older_than_seed or first is None:
            return
        points = [*(point for point in steps if point[0] < first[0]), first]
        if len(points) > 1 and points[0][0] <= start + 2 * _typical_interval(points):
            return  # the job began before the backend's history: unknown
        self.job_began = points[0][0]
        high, made = points[0][1], 0.0
        for _, step in points[1:]:
            made += max(0.0, step - high)
            high = max(high, step)
        self._before.wall, self._before.steps = first[0] - self.job_began, made

    def _advance(self, now: float, step: float | None, cause: str | None) -> _Entry | None:
        """The entry from the last frame to this one, kept; None for the first frame or
        one not after the last."""
        last, self._last = self._last, (now, step)
        if last is None or self._high == -math.inf:  # no step seen yet: nothing to judge
            if step is not None:
                self._high = step
            return None
        if now <= last[0]:
            self._last = last
            return None
        previous = last[1]
        # Absent, back after an absence, gone back, or from below the highest step seen
        # (loading a checkpoint, doing again the steps done before): a restart's cost.
        fixed = step is None or previous is None or step < previous or previous < self._high
        new = 0.0 if step is None else max(0.0, step - self._high)
        if step is not None:
            self._high = max(self._high, step)
        entry = _Entry(last[0], now, new, RESTART if fixed else cause, fixed)
        self._keep(entry, now)
        return entry

    def _keep(self, entry: _Entry, now: float) -> None:
        """Keep ``entry`` (a copy), fold what is no longer recent by the minute and cause
        (what lays time back rarely reaches so far), and forget what is older than the
        hour."""
        self._totals(entry.cause).add(entry)
        self._recent.append(_Entry(entry.start, entry.end, entry.steps, entry.cause,
                                   entry.fixed))
        while self._recent and (self._recent[0].end <= now - RECENT_SECONDS
                                or len(self._recent) > MOST_ENTRIES):
            folded = self._recent.popleft()
            last = self._folded[-1] if self._folded else None
            if last is not None and _same_bucket(last, folded):
                last.end, last.steps = folded.end, last.steps + folded.steps
            else:
                self._folded.append(folded)
        for kept in (self._folded, self._recent):
            while kept and kept[0].end <= now - HOUR_SECONDS:
                old = kept.popleft()
                self._totals(old.cause).add(old, -1.0)

    def _newest_first(self) -> Iterator[_Entry]:
        return chain(reversed(self._recent), reversed(self._folded))

    def _totals(self, cause: str | None) -> _Totals:
        return self._hour.setdefault(cause, _Totals())

    def _lay_back(self, anomalies: Sequence[Anomaly]) -> None:
        """Lay the intervals since each cause's anomalies began at its door, unless a
        stronger cause holds them; a hang or stall began when the step last moved (its
        detector confirms it later, and may date it from then)."""
        began: dict[str, float] = {}
        for anomaly in anomalies:
            cause = CAUSE_OF_KIND.get(anomaly.kind)
            if cause is not None:
                began[cause] = min(began.get(cause, math.inf), anomaly.since)
        for cause, since in began.items():
            for entry in self._newest_first():
                # from the interval it was first seen in
                if entry.end < since and (cause not in STOPPING or entry.steps > 0):
                    break
                if not entry.fixed and _stronger(cause, entry.cause):
                    self._totals(entry.cause).add(entry, -1.0)
                    entry.cause = cause
                    self._totals(cause).add(entry)

    # -- reading -------------------------------------------------------------------------

    def value(self, now: float) -> Goodput:
        """The goodput as of ``now`` (the last frame fed)."""
        baseline = self.baseline.step
        hour = _Totals()
        lost: dict[str, float] = {}
        for cause, totals in self._hour.items():
            hour.wall += totals.wall
            hour.steps += totals.steps
            if not math.isnan(baseline) and totals.wall > 0:
                name = cause or UNKNOWN
                lost[name] = lost.get(name, 0.0) + totals.wall - totals.steps * baseline
        first = self._folded or self._recent
        covered = (now - first[0].start) if first else 0.0
        whole = _Totals()
        for part in (self._fed, self._seeded, self._before):
            whole.wall += part.wall
            whole.steps += part.steps
        return Goodput(
            hour=hour.share(baseline), since_start=self._fed.share(baseline),
            job=whole.share(baseline) if self.job_began is not None else math.nan,
            lost={c: max(0.0, lost[c]) for c in CAUSES if c in lost}, baseline_step=baseline,
            covered=min(HOUR_SECONDS, covered),
            watched=0.0 if self._fed_since is None else now - self._fed_since,
            job_began=self.job_began, settled=self.baseline.settled)


def share_text(goodput: Goodput) -> str:
    """"87 %" for the last hour, "91 % (12 min)" while less of it is covered; "" unknown."""
    if not goodput.known:
        return ""
    text = f"{100 * goodput.hour:.0f} %"
    return text if goodput.whole_hour else f"{text} ({duration_text(goodput.covered)})"


def duration_text(seconds: float) -> str:
    """"42 s", "12 min", "2.5 h"."""
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 2 * HOUR_SECONDS:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / HOUR_SECONDS:.1f} h"


def strongest(causes) -> str | None:
    """The strongest of ``causes`` (Nones ignored), None when there is none."""
    found = [c for c in causes if c is not None]
    return min(found, key=CAUSES.index) if found else None


def _same_bucket(last: _Entry, entry: _Entry) -> bool:
    """Whether ``entry`` goes on ``last``: the same cause, in the same minute."""
    return (last.cause == entry.cause and last.fixed == entry.fixed and last.end == entry.start
            and last.start // BUCKET_SECONDS == entry.start // BUCKET_SECONDS)


def _stronger(cause: str, than: str | None) -> bool:
    return than is None or CAUSES.index(cause) < CAUSES.index(than)


def _typical_interval(points: Sequence[tuple[float, float]]) -> float:
    """The usual spacing of ``points``' times (0 for fewer than two)."""
    gaps = sorted(b[0] - a[0] for a, b in pairwise(points))
    return gaps[len(gaps) // 2] if gaps else 0.0
