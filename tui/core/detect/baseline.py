"""The job's healthy step time: what goodput measures progress against.

Not the current step time (a straggler would make its own slowness the norm) but the step
of the job's calm moments: polls where the step moved and no anomaly that slows or stops
the job was active. Their median step times (or, without a step-time metric, the step
counter's pace) are gathered by the minute; the baseline is a low quantile of the minutes,
so that a slowdown the detectors have not caught yet barely moves it.

Before any calm poll (a late start, a moment of the past replayed in the middle of an
incident) it comes from the source's past of the step counter: the pace of its fastest
stretches."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

from ..model import is_missing

MINUTE_SECONDS = 60.0
MINUTES_KEPT = 24 * 60  # a day of calm minutes
QUANTILE = 0.25  # of the calm minutes: below the median, so an unseen slowdown counts little
MIN_RATE_STEPS = 5  # steps a minute needs for its pace to stand for its step time
SEED_STRETCH_SECONDS = 40.0  # the past's pace is measured over stretches this long ...
SEED_QUANTILE = 0.1  # ... and the fastest of them taken (a tenth: not a lucky one)


class StepBaseline:
    """The healthy step's seconds (``step``), from calm polls fed one by one."""

    def __init__(self) -> None:
        self._minutes: deque[float] = deque(maxlen=MINUTES_KEPT)
        self._minute: float | None = None  # the open minute's start
        self._medians: list[float] = []  # the open minute's median step times
        self._wall = 0.0  # ... and its wall seconds and steps, for its pace
        self._steps = 0.0
        self._seeded = math.nan
        self._calm_seconds = 0.0  # of every calm poll fed

    def calm(self, now: float, step_seconds: float, wall: float, steps: float) -> None:
        """A calm poll at ``now``: the job's median step time then (NaN where unknown), and
        the ``steps`` it advanced in ``wall`` seconds."""
        minute = math.floor(now / MINUTE_SECONDS) * MINUTE_SECONDS
        if minute != self._minute:
            self._close()
            self._minute = minute
        if not is_missing(step_seconds) and step_seconds > 0:
            self._medians.append(step_seconds)
        self._wall += wall
        self._steps += steps
        self._calm_seconds += wall

    def seed(self, steps: Sequence[tuple[float, float]]) -> None:
        """The step counter's past (time, step), oldest first: its fastest stretches'
        pace stands for the baseline until a calm poll is seen."""
        paces = []
        begin = 0
        for end in range(1, len(steps)):
            if steps[end][1] <= steps[end - 1][1]:  # standing still or gone back
                begin = end
                continue
            while steps[end][0] - steps[begin + 1][0] >= SEED_STRETCH_SECONDS:
                begin += 1
            seconds, advanced = steps[end][0] - steps[begin][0], steps[end][1] - steps[begin][1]
            if seconds >= SEED_STRETCH_SECONDS and advanced >= MIN_RATE_STEPS:
                paces.append(seconds / advanced)
        if paces:
            self._seeded = quantile(paces, SEED_QUANTILE)

    @property
    def settled(self) -> bool:
        """Whether the baseline stands on a calm minute (the calm polls' seconds add up to
        one) or on the source's past: before, a job's first seconds (warming up, compiling)
        would make its own baseline."""
        return self._calm_seconds >= MINUTE_SECONDS or not math.isnan(self._seeded)

    @property
    def step(self) -> float:
        """The healthy step's seconds: NaN until something calm was seen."""
        minutes = list(self._minutes)
        current = self._value()
        if current is not None:
            minutes.append(current)
        return quantile(minutes, QUANTILE) if minutes else self._seeded

    def _close(self) -> None:
        value = self._value()
        if value is not None:
            self._minutes.append(value)
        self._medians, self._wall, self._steps = [], 0.0, 0.0

    def _value(self) -> float | None:
        """The open minute's step time: the median of its medians, else its pace."""
        if self._medians:
            return quantile(self._medians, 0.5)
        if self._steps >= MIN_RATE_STEPS:
            return self._wall / self._steps
        return None


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (not empty), interpolated between neighbours."""
    ordered = sorted(values)
    at = q * (len(ordered) - 1)
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)
