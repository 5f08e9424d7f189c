"""Everything done with each frame besides drawing it, in the poll worker's thread: detect
anomalies, journal them, keep the recent history, and triage a hang from the ranks' logs."""

from __future__ import annotations

from ranktop.tui.core.detect import Anomaly, Detectors
from ranktop.tui.core.events import EventLog
from ranktop.tui.core.hang import triage
from ranktop.tui.core.history import History
from ranktop.tui.core.journal import Journal
from ranktop.tui.core.model import Frame, RankMap, is_missing
from ranktop.tui.rank_context import RankContext
from ranktop.tui.settings.config import Settings

# A job whose step has not moved for this long gets its logs read for watchdog timeouts.
HANG_AFTER_SECONDS = 15.0
TRIAGE_EVERY_SECONDS = 10.0
TRIAGE_TAIL_LINES = 200
HANG_SIGNS = ("missing", "job_stall", "throughput")


class Watch:
    """Per-frame analysis; rebuilt pieces follow the source's rank map."""

    def __init__(self, settings: Settings, job: str, event_log: EventLog | None,
                 context: RankContext, rank_map: RankMap) -> None:
        self.settings = settings
        self.context = context
        self.journal = Journal(job, event_log)
        self.rank_map = rank_map
        self.detectors = Detectors(settings.detect, rank_map)
        self.history = History(len(rank_map))
        self._step: tuple[float, float] | None = None  # (step, when it was first seen)
        self._triaged_at = -1e18

    def update(self, frame: Frame, rank_map: RankMap) -> list[Anomaly]:
        if rank_map is not self.rank_map:
            self.rank_map = rank_map
            self.detectors = Detectors(self.settings.detect, rank_map)
            self.history = History(len(rank_map))
        self.history.append(frame)
        anomalies = self.detectors.update(frame)
        hang = self._hang(frame, anomalies)
        if hang is not None:
            anomalies = sorted([hang, *anomalies], key=lambda a: a.order)
        self.journal.update(frame.time, anomalies, rank_map)
        return anomalies

    def _hang(self, frame: Frame, anomalies: list[Anomaly]) -> Anomaly | None:
        """The hang verdict from the logs, re-read now and then while the job looks stuck."""
        if not self._looks_stuck(frame, anomalies):
            self.context.hang = None
            return None
        if frame.time - self._triaged_at >= TRIAGE_EVERY_SECONDS:
            self._triaged_at = frame.time
            self.context.hang = self._triage()
        verdict = self.context.hang
        if verdict is None or not verdict.behind:
            return None
        return Anomaly("hang", "critical", verdict.behind[0], verdict.summary, self._triaged_at)

    def _looks_stuck(self, frame: Frame, anomalies: list[Anomaly]) -> bool:
        step = frame.job.get("step", float("nan"))
        if not is_missing(step) and (self._step is None or step != self._step[0]):
            self._step = (step, frame.time)
        stalled = self._step is not None and frame.time - self._step[1] >= HANG_AFTER_SECONDS
        return stalled or any(a.kind in HANG_SIGNS for a in anomalies)

    def _triage(self):
        if not self.context.log_spec:
            return None
        lines_by_rank = {}
        for rank in range(len(self.rank_map)):
            logs, _ = self.context.open_logs(self.rank_map, rank)
            lines_by_rank[rank] = [line.text for log in logs
                                   for line in log.tail(TRIAGE_TAIL_LINES)]
        return triage(lines_by_rank, len(self.rank_map))
