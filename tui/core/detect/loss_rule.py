"""The job's loss against what is ordinary for this job: its level and its noise.

A real per-step loss is noisy (each step sees another batch), so a bar set at a fixed share
above its lowest value crosses with ordinary noise, and a rule that wants the loss rising
falls silent on a spike that plateaus. This rule learns the loss's level (the median of
the last window of ordinary values) and its spread (the median absolute deviation, scaled
to a standard deviation), and holds a loss as anomalous while it stands above both a share
over the level and a number of spreads over it.

Values judged anomalous do not enter the baseline: a loss that jumps and stays there is
held against the level it had before, for as long as it stays.
"""

from __future__ import annotations

from collections import deque
from statistics import median

MAD_TO_SIGMA = 1.4826  # a normal noise's standard deviation per median absolute deviation
MIN_SAMPLES = 10  # ordinary values needed before any judgement
SPREAD_FLOOR = 0.005  # of the level: a loss that never moves still has some noise


class LossRule:
    """Feed the job's loss one value at a time; ``judge`` says when it stands outside."""

    def __init__(self, window_seconds: float, rise: float, spreads: float) -> None:
        self.window_seconds = window_seconds
        self.rise = rise
        self.spreads = spreads
        self._ordinary: deque[tuple[float, float]] = deque()

    def learn(self, when: float, loss: float) -> None:
        """Take ``loss`` as ordinary (the past before the first poll) unless it is not."""
        self.judge(when, loss)

    def judge(self, when: float, loss: float) -> str | None:
        """Why ``loss`` at ``when`` is anomalous, or None (it then joins the baseline)."""
        bar = self.bar()
        if bar is not None and loss > bar[0]:
            level, spread = bar[1], bar[2]
            return (f"loss {loss:.3f}, {loss / level:.2f}x its usual level "
                    f"({level:.3f} ± {spread:.3f} over the last {self.window_seconds:.0f} s "
                    "before it rose)")
        self._ordinary.append((when, loss))
        while self._ordinary and self._ordinary[0][0] < when - self.window_seconds:
            self._ordinary.popleft()
        return None

    def bar(self) -> tuple[float, float, float] | None:
        """(the bar, the level, the spread), or None while too few values are known."""
        if len(self._ordinary) < MIN_SAMPLES:
            return None
        values = [value for _, value in self._ordinary]
        level = median(values)
        if level <= 0:
            return None
        spread = max(MAD_TO_SIGMA * median(abs(v - level) for v in values),
                     SPREAD_FLOOR * level)
        return max(level * (1 + self.rise), level + self.spreads * spread), level, spread
