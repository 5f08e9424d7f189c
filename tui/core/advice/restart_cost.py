"""What restarting a stopped job costs: the work since its last checkpoint, lost, and the
GPU-hours it has stood idle so far (growing each poll while it stays stopped).

Steps lost = the step the job stands at - the checkpoint's step. GPU-hours lost = steps lost
x a healthy step's seconds x GPUs / 3600. Idle GPU-hours = seconds stopped x GPUs / 3600.
A healthy step's seconds are goodput's baseline step (``core.detect.goodput``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..hang.checkpoint import HOW_TO_CONFIGURE, Checkpoint
from ..model import is_missing
from ..moment import ago

SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class JobStop:
    """A stopped job as one poll sees it: what its restart's cost is worked out from."""

    now: float
    step: float  # the step it stands at (NaN: unknown)
    stopped_since: float | None  # when that step was first seen (None: unknown)
    step_seconds: float  # a healthy step (goodput's baseline; NaN: unknown)
    gpus: int

    def stopped_by(self, moment: float | None) -> JobStop:
        """The stop, known to have begun by ``moment`` at the latest (when the anomaly that
        stopped it began: a report's single poll cannot see the step stand still)."""
        if moment is None or (self.stopped_since is not None and self.stopped_since <= moment):
            return self
        return replace(self, stopped_since=moment)


@dataclass(frozen=True)
class RestartCost:
    """The checkpoint a restart resumes from (None: unknown), what it loses, and what the
    stop has cost so far. A figure ranktop cannot work out is None."""

    checkpoint: Checkpoint | None
    steps_lost: int | None
    gpu_hours_lost: float | None
    stopped_seconds: float | None
    idle_gpu_hours: float | None

    @property
    def text(self) -> str:
        """"resumes from step 120,100 (checkpoint metric), losing 87 steps = 14.2 GPU-hours;
        stopped 2 min: 18.5 GPU-hours idle so far"."""
        return f"{self._resumes()}; {self._stopped()}"

    @property
    def read_from(self) -> str:
        """Where a checkpoint from the logs was read: "" for the metric's, or none."""
        found = self.checkpoint
        if found is None or not found.line:
            return ""
        whose = f"rank {found.rank}'s log" if found.rank is not None else "the logs"
        return f"checkpoint read from {whose}: {found.line}"

    def _resumes(self) -> str:
        if self.checkpoint is None:
            return f"no checkpoint known ({HOW_TO_CONFIGURE})"
        said = f"resumes from step {self.checkpoint.step:,} ({self.checkpoint.source})"
        if self.steps_lost is None:
            return said
        lost = f"losing {self.steps_lost:,} step{'' if self.steps_lost == 1 else 's'}"
        if self.gpu_hours_lost is not None:
            lost += f" = {self.gpu_hours_lost:,.1f} GPU-hours"
        return f"{said}, {lost}"

    def _stopped(self) -> str:
        if self.stopped_seconds is None or self.idle_gpu_hours is None:
            return "stopped since: unknown"
        return (f"stopped {ago(self.stopped_seconds)}: {self.idle_gpu_hours:,.1f} GPU-hours "
                "idle so far")


def restart_cost(stop: JobStop, checkpoint: Checkpoint | None) -> RestartCost:
    """The cost of restarting ``stop``'s job from ``checkpoint``."""
    steps_lost = gpu_hours_lost = None
    if checkpoint is not None and not is_missing(stop.step):
        steps_lost = max(0, int(stop.step) - checkpoint.step)
        if not is_missing(stop.step_seconds):
            gpu_hours_lost = _gpu_hours(steps_lost * stop.step_seconds, stop.gpus)
    stopped = None if stop.stopped_since is None else max(0.0, stop.now - stop.stopped_since)
    idle = None if stopped is None else _gpu_hours(stopped, stop.gpus)
    return RestartCost(checkpoint, steps_lost, gpu_hours_lost, stopped, idle)


def _gpu_hours(seconds: float, gpus: int) -> float:
    return seconds * gpus / SECONDS_PER_HOUR
