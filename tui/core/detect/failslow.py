"""Whole-job fail-slow: the job's step time shifted up and stayed there, with no rank
standing out (a slower fabric, a shared filesystem, a hotter hall, a code change).

A one-sided CUSUM on the job's step time (the median over the ranks, smoothed over a few
polls so that the one long step after a stall is not a shift), against a baseline learned
while the job ran in control. The alarm needs both the CUSUM past its bar and the level since
the change at least ``shift`` above the baseline (Greyhound / FALCON's rule: a change point
and a shift of at least 10 %); it is pending until that has held for ``seconds``, and says
when the change began. Polls a straggler explains, or where the job does not run, are left
out of both the baseline and the sum.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from statistics import median

from ..anomaly import Anomaly, Hold
from ..model import is_missing
from ..moment import shown

MAD_TO_SIGMA = 1.4826
SMOOTH = 5  # polls whose median is one sample
BASELINE_MIN = 15  # samples before the baseline is trusted
BASELINE_MAX = 150  # samples of the baseline kept (the newest in control)
NOISE_FLOOR = 0.005  # the baseline's noise is taken as at least this share of its level
BAR_SIGMAS = 5.0  # the CUSUM's bar, in the baseline's noise
SUM_CAP_BARS = 10.0  # the sum stops growing here, so that a recovery is seen soon
KEEP_SHARE = 0.5  # an alarm ends when the level falls under this share of the shift


class FailSlow:
    """The change-point detector; ``update`` takes one poll's job step time."""

    def __init__(self, shift: float = 0.10, seconds: float = 30) -> None:
        self.shift = shift
        self.hold = Hold("fail_slow", "major", seconds)
        self._recent: deque[tuple[float, float]] = deque(maxlen=SMOOTH)  # (time, raw)
        self._baseline: deque[float] = deque(maxlen=BASELINE_MAX)
        self._since: deque[float] = deque(maxlen=BASELINE_MAX)  # samples since the change
        self._sum = 0.0
        self.started: float | None = None  # when the shift began (the change point)
        self.alarmed = False
        self._text = ""

    @property
    def level(self) -> float:
        return median(self._baseline) if len(self._baseline) >= BASELINE_MIN else float("nan")

    def update(self, now: float, step_time: float, explained: bool = False) -> list[Anomaly]:
        """The fail-slow anomaly, if any, after a poll whose job step time is ``step_time``;
        ``explained``: a straggler (or a stopped job) accounts for this poll's step time."""
        if is_missing(step_time) or step_time <= 0 or explained:
            return self._hold(now)
        self._recent.append((now, step_time))
        sample = median(v for _, v in self._recent)
        if len(self._baseline) < BASELINE_MIN:
            self._baseline.append(sample)
            return self._hold(now)
        level = self.level
        noise = max(MAD_TO_SIGMA * median(abs(v - level) for v in self._baseline),
                    NOISE_FLOOR * level)
        bar = BAR_SIGMAS * noise
        self._sum = min(max(0.0, self._sum + sample - level * (1 + self.shift / 2)),
                        SUM_CAP_BARS * bar)
        if self._sum == 0.0:
            self._in_control(sample)
        else:
            if self.started is None:
                self.started = self._onset(level)
            self._since.append(sample)
            self._judge(level, bar)
        return self._hold(now)

    def _in_control(self, sample: float) -> None:
        self._baseline.append(sample)
        self._since.clear()
        self.started, self.alarmed, self._text = None, False, ""

    def _onset(self, level: float) -> float:
        """The first of the latest raw step times above the level plus half the shift."""
        onset = self._recent[-1][0]
        for when, raw in reversed(self._recent):
            if raw < level * (1 + self.shift / 2):
                break
            onset = when
        return onset

    def _judge(self, level: float, bar: float) -> None:
        now_level = median(self._since)
        rise = now_level / level - 1
        if not self.alarmed:
            self.alarmed = self._sum >= bar and rise >= self.shift
        elif rise < KEEP_SHARE * self.shift:
            self._sum, self.alarmed = 0.0, False
            self._in_control(now_level)
        if self.alarmed:
            self._text = (f"step time {now_level:.2f} s, +{rise:.0%} over its level before "
                          f"({level:.2f} s) since {shown(self.started)}, "
                          "no rank standing out: the whole job slowed")

    def _hold(self, now: float) -> list[Anomaly]:
        found = self.hold.update(now, {None: self._text} if self.alarmed else {})
        return [replace(a, since=self.started) for a in found]
