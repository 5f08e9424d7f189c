"""Metric values for people: units, summaries, and the scale a heatmap colours against."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from statistics import median

from .config_values import MetricDef
from .domain import throttle_names
from .model import FLOAT32_MAX, Frame, is_missing

# How far above the job's baseline an "auto" scale reaches before it is fully hot.
AUTO_LOW = 0.9
AUTO_HIGH = 1.8
# Frames of history that an "auto" baseline looks back over (its lowest median wins, so a
# job-wide slowdown shows hot instead of becoming the new normal).
AUTO_WINDOW = 150
LARGE = 1e15  # values past it are said in scientific notation


def format_value(metric: MetricDef, value: float) -> str:
    """``value`` in the metric's unit, e.g. "87 %", "1.12 s", "312 GB/s"; "n/a" for no data."""
    if is_missing(value):
        return "n/a"
    unit = metric.unit
    if not abs(value) < LARGE:  # no GPU or job gives one: said short, as it came
        return f"{value:.3g} {unit}"
    if unit == "flags":
        return throttle_names(value)
    if unit == "B/s":
        return _scaled(value, 1000, ("B/s", "kB/s", "MB/s", "GB/s", "TB/s"))
    if unit == "MiB":
        return f"{value / 1024:.1f} GiB" if value >= 1024 else f"{value:.0f} MiB"
    if unit in ("count", "code"):
        return f"{value:.0f}"
    number = f"{value:.{metric.digits}f}"
    return f"{number}{unit}" if unit in ("%", "°C") else f"{number} {unit}"


def _scaled(value: float, step: float, units: Sequence[str]) -> str:
    for unit in units[:-1]:
        if abs(value) < step:
            return f"{value:.{_decimals(value, unit == units[0])}f} {unit}"
        value /= step
    return f"{value:.{_decimals(value, False)}f} {units[-1]}"


def _decimals(value: float, whole: bool) -> int:
    """Three significant digits are plenty on a heatmap: 312 GB/s, 31.2 GB/s."""
    return 0 if whole or abs(value) >= 100 else 1


Summary = tuple[float, float, float]  # min, median, max of the values present


def present_median(values: Sequence[float] | None) -> float:
    """The median of the values that are present; NaN when none are."""
    present = [v for v in values or () if v == v]  # not NaN
    return median(present) if present else float("nan")


def summarise(values: Sequence[float]) -> Summary | None:
    """(min, median, max) over the values that are present, or None if none are."""
    # sorted once for its ends; the median's own sort of a sorted list is a single pass
    present = sorted([v for v in values if v == v])  # not NaN
    if not present:
        return None
    return present[0], median(present), present[-1]


class FrameSummaries:
    """The summary of each metric of one frame, each worked out once, when first asked:
    the analysis, the history, the scales and the detectors of one poll share them (a
    median over every rank of a large job is a sort)."""

    def __init__(self, frame: Frame) -> None:
        self.frame = frame
        self._known: dict[str, Summary | None] = {}

    def of(self, metric: str) -> Summary | None:
        if metric not in self._known:
            self._known[metric] = summarise(self.frame.values.get(metric, ()))
        return self._known[metric]

    def median(self, metric: str) -> float:
        """The job's median of ``metric``; NaN where no rank has a value."""
        summary = self.of(metric)
        return float("nan") if summary is None else summary[1]

    def every(self) -> dict[str, Summary | None]:
        """The summary of every metric the frame holds."""
        return {metric: self.of(metric) for metric in self.frame.values}


class ScaleTracker:
    """The low and high ends of one metric's colour scale.

    A fixed scale comes from the config. An "auto" scale (for times, which differ from job
    to job) is anchored on the lowest frame median seen over the recent window, so a whole
    job slowing down turns hot rather than redefining normal.
    """

    def __init__(self, metric: MetricDef) -> None:
        self.metric = metric
        self._medians: deque[float] = deque(maxlen=AUTO_WINDOW)

    def update(self, job_median: float) -> tuple[float, float] | None:
        """Feed one frame's median of the metric (NaN: none); returns the scale, or None
        while nothing is known."""
        if self.metric.scale is not None:
            return self.metric.scale
        if 0 < job_median <= FLOAT32_MAX:  # False for NaN; its scale's top stays finite
            self._medians.append(job_median)
        if not self._medians:
            return None
        baseline = min(self._medians)
        return baseline * AUTO_LOW, baseline * AUTO_HIGH
