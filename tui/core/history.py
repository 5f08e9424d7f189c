"""The app's own recent history: each poll's values of a few metrics for every rank, and the
job's median of each, in a bounded ring buffer of compact float arrays.

The bound is in values, not frames, so memory stays flat however many ranks the job has:
at 512 ranks it holds ten minutes of 2 s polls; at 16,384 ranks fewer.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from ranktop.tui.core.metrics import present_median
from ranktop.tui.core.model import Frame

HISTORY_METRICS = ("sm_active", "temperature", "nvlink", "step_time", "compute_time")
MAX_FRAMES = 300
MAX_VALUES = 16_000_000  # 4 bytes each: at most ~64 MB of history


@dataclass(frozen=True)
class Point:
    time: float
    value: float
    median: float


class History:
    """The last polls, oldest first."""

    def __init__(self, n_ranks: int, metrics: Sequence[str] = HISTORY_METRICS) -> None:
        self.n_ranks = n_ranks
        self.metrics = tuple(metrics)
        per_frame = max(1, n_ranks * len(self.metrics))
        self.capacity = max(2, min(MAX_FRAMES, MAX_VALUES // per_frame))
        self._times: deque[float] = deque(maxlen=self.capacity)
        self._values: dict[str, deque[array]] = {
            m: deque(maxlen=self.capacity) for m in self.metrics}
        self._medians: dict[str, deque[float]] = {
            m: deque(maxlen=self.capacity) for m in self.metrics}

    def __len__(self) -> int:
        return len(self._times)

    def append(self, frame: Frame) -> None:
        self._times.append(frame.time)
        for metric in self.metrics:
            series = frame.values.get(metric)
            values = array("f", series if series is not None and len(series) == self.n_ranks
                           else [float("nan")] * self.n_ranks)
            self._values[metric].append(values)
            self._medians[metric].append(present_median(values))

    def series(self, metric: str, rank: int, since: float | None = None) -> list[Point]:
        """The rank's values of ``metric`` with the job's median at each poll."""
        if metric not in self._values or not 0 <= rank < self.n_ranks:
            return []
        return [
            Point(t, float(values[rank]), m)
            for t, values, m in zip(self._times, self._values[metric], self._medians[metric],
                                    strict=True)
            if since is None or t >= since
        ]

    @property
    def oldest(self) -> float | None:
        return self._times[0] if self._times else None
