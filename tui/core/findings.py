"""What a report, or a handed-over bundle, says of a job at one moment: the analysis, what
came and went meanwhile, and the three judgements behind the report's exit code (healthy,
no progress, cannot judge)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .analysis import Analysis
from .detect.detectors import Anomaly
from .model import Frame, Health, RankMap, SourceStatus
from .moment import JobEnd


@dataclass
class Findings:
    """What a report says: the last analysis, what came and went, why the source failed."""

    job: str
    analysis: Analysis
    resolved: list[Anomaly] = field(default_factory=list)
    error: str = ""
    stall_hold: float = math.inf  # seconds without progress past which a job is not healthy
    at: float | None = None  # the past moment reported (epoch seconds); None: live
    ended: JobEnd | None = None  # the job's series had ended: ``at`` is their last moment

    @property
    def active(self) -> list[Anomaly]:
        return list(self.analysis.anomalies)

    @property
    def frame(self) -> Frame | None:
        return self.analysis.frame

    @property
    def rank_map(self) -> RankMap:
        return self.analysis.rank_map

    @property
    def status(self) -> SourceStatus:
        return self.analysis.status


def exit_code(findings: Findings) -> int:
    """1 when a confirmed anomaly is active, the job stands still past a stall's hold, its
    series have ended, or the report cannot judge; pending anomalies alone are listed but do
    not fail it."""
    confirmed = findings.analysis.confirmed
    gone = findings.ended is not None
    return 1 if confirmed or gone or no_progress(findings) or cannot_judge(findings) else 0


def no_progress(findings: Findings) -> str:
    """"no progress for 27 s (a stall may last 20 s)" when the step has stood still past
    the stall's hold: not healthy, whatever is still pending; else ""."""
    frame = findings.frame
    if frame is None:
        return ""
    still = findings.analysis.progress.stalled_for(frame.time)
    if still < findings.stall_hold:
        return ""
    return f"no progress for {still:.0f} s (a stall may last {findings.stall_hold:.0f} s)"


def cannot_judge(findings: Findings) -> str:
    """Why the data is not enough to call the job healthy, or "" when it is."""
    if findings.error or findings.frame is None:
        return f"the source could not be read: {findings.error or findings.status.message}"
    if findings.status.partial:
        return f"the backend's answers are partial: {findings.status.message}"
    if findings.status.health in (Health.STALE, Health.ERROR) or (
            findings.status.health is Health.SLOW and "partial" in findings.status.message):
        return f"the source is {findings.status.health.value}: {findings.status.message}"
    if not len(findings.rank_map):  # an answer with no rank in it: no all-clear from it
        return "no rank of the job is known"
    if findings.analysis.ranks_up == 0:
        return f"no rank of {len(findings.rank_map)} is up"
    return ""
