"""The values of the configuration that the core works with: how a metric is read and
judged, the detectors' thresholds and the maps' layout by parallelism.

They are plain frozen values; ``ranktop.tui.settings`` reads them from the TOML files and
checks them, and the core never imports the loader.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from .parallelism import Parallelism

DCGM_SELECTOR = "{dcgm}"  # in a metric's PromQL: where the DCGM selector goes
JOB_SELECTOR = "{job}"  # ... and the training job's


@dataclass(frozen=True)
class MetricQuery:
    """One way of reading a metric from Prometheus; ``shows`` names it on screen."""

    promql: str
    shows: str


@dataclass(frozen=True)
class MetricDef:
    """How one metric is titled, scaled and judged."""

    id: str
    title: str
    short: str
    unit: str
    scale: tuple[float, float] | None  # None: scale to the job's own baseline
    bad: str
    warn: float | None
    digits: int
    queries: tuple[MetricQuery, ...] = ()  # PromQL, tried per GPU in order

    @property
    def from_gpu(self) -> bool:
        """Whether it is read from the GPUs alone (DCGM, NVML), not the job's own series."""
        return bool(self.queries) and all(
            DCGM_SELECTOR in q.promql and JOB_SELECTOR not in q.promql for q in self.queries)


@dataclass(frozen=True)
class DetectSettings:
    """Thresholds of the built-in detectors (``[detect]``)."""

    temperature_c: float = 82
    thermal_seconds: float = 10
    sm_active_pct: float = 60
    sm_stall_seconds: float = 60
    job_stall_share: float = 0.5
    job_stall_seconds: float = 20
    straggler_factor: float = 1.10
    straggler_critical_factor: float = 1.20
    straggler_mads: float = 5
    straggler_seconds: float = 20
    nvlink_fraction: float = 0.5
    nvlink_seconds: float = 20
    loss_rise: float = 0.25
    loss_spreads: float = 6
    loss_window_seconds: float = 120
    loss_seconds: float = 10
    throughput_fraction: float = 0.5
    throughput_seconds: float = 20
    throughput_window_seconds: float = 300
    failslow_shift: float = 0.10
    failslow_seconds: float = 20


@dataclass(frozen=True)
class LayoutSettings:
    """``[layout]``: how the maps arrange the ranks."""

    parallelism: Parallelism | None = None  # None: not given, the maps stay by node
    view: str = "node"  # the layout the maps start in


class AnalysisSettings(Protocol):
    """What the analysis reads of the configuration (``settings.config.Settings`` is one)."""

    @property
    def metrics(self) -> Mapping[str, MetricDef]: ...

    @property
    def detect(self) -> DetectSettings: ...

    @property
    def layout(self) -> LayoutSettings: ...
