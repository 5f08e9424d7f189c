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

from .metrics import FrameSummaries
from .model import Frame

HISTORY_METRICS = ("sm_active", "temperature", "nvlink", "step_time", "compute_time")
MAX_FRAMES = 300
MAX_VALUES = 16_000_000  # 4 bytes each: at most ~64 MB of history


@dataclass(frozen=True)
class Point:
    time: float
    value: float
    median: float


class HistoryView:
    """A frozen look at the history as of one poll, safe to read from another thread: the
    arrays it holds are never written after they are appended."""

    def __init__(self, times: Sequence[float], values: dict[str, Sequence[array]],
                 medians: dict[str, Sequence[float]]) -> None:
        self.times = tuple(times)
        self._values = {m: tuple(v) for m, v in values.items()}
        self._medians = {m: tuple(v) for m, v in medians.items()}

    def __len__(self) -> int:
        return len(self.times)

    def series(self, metric: str, rank: int, since: float | None = None) -> list[Point]:
        """The rank's values of ``metric`` with the job's median at each poll."""
        if metric not in self._values or rank < 0:
            return []
        return [
            Point(t, float(values[rank]) if rank < len(values) else float("nan"), m)
            for t, values, m in zip(self.times, self._values[metric], self._medians[metric],
                                    strict=True)
            if since is None or t >= since
        ]

    @property
    def oldest(self) -> float | None:
        return self.times[0] if self.times else None


class History:
    """The last polls, oldest first; written by the poll worker only."""

    def __init__(self, metrics: Sequence[str] = HISTORY_METRICS) -> None:
        self.metrics = tuple(metrics)
        self.n_ranks = 0
        self.capacity = MAX_FRAMES
        self._times: deque[float] = deque(maxlen=self.capacity)
        self._values: dict[str, deque[array]] = {
            m: deque(maxlen=self.capacity) for m in self.metrics}
        self._medians: dict[str, deque[float]] = {
            m: deque(maxlen=self.capacity) for m in self.metrics}

    def __len__(self) -> int:
        return len(self._times)

    def append(self, frame: Frame, n_ranks: int,
               summaries: FrameSummaries | None = None) -> None:
        """Keep ``frame``'s values (``summaries``: the frame's, when already worked out)."""
        summaries = summaries if summaries is not None else FrameSummaries(frame)
        if n_ranks != self.n_ranks:
            self._resize(n_ranks)
        self._times.append(frame.time)
        for metric in self.metrics:
            series = frame.values.get(metric)
            values = array("f", series[:n_ranks] if series is not None else ())
            values.extend([float("nan")] * (n_ranks - len(values)))
            self._values[metric].append(values)
            self._medians[metric].append(summaries.median(metric))

    def view(self) -> HistoryView:
        return HistoryView(self._times, self._values, self._medians)

    def _resize(self, n_ranks: int) -> None:
        """The bound is in values: a bigger job keeps fewer polls (the newest)."""
        self.n_ranks = n_ranks
        per_frame = max(1, n_ranks * len(self.metrics))
        capacity = max(2, min(MAX_FRAMES, MAX_VALUES // per_frame))
        if capacity != self.capacity:
            self.capacity = capacity
            self._times = deque(self._times, maxlen=capacity)
            self._values = {m: deque(v, maxlen=capacity) for m, v in self._values.items()}
            self._medians = {m: deque(v, maxlen=capacity) for m, v in self._medians.items()}
