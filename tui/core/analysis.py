"""One analysis per poll: everything the screens and `ranktop report` show, computed once in
the poll worker's thread and handed over whole.

``Analyser.analyse`` takes a frame and the source's status and returns an ``Analysis``: the
frame, the anomalies (pending and confirmed), those resolved of late, the hang verdict from
the ranks' logs, ranks up and down, the job's progress and goodput, and each metric's
summary and colour scale. Nothing else crosses from the worker to the UI: screens format
an Analysis and compute nothing it already holds.

The hang verdict is the newest one a triage finished (``ranktop.tui.core.hang.watch``): the
analysis asks for the logs to be read and never waits for them.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from .advice.advise import Action, Seen, advise
from .advice.incidents import Incident, incidents, left_behind
from .advice.restart_cost import JobStop
from .advice.tenants import NodeTenants
from .config_values import AnalysisSettings
from .detect.detectors import Anomaly, Detectors
from .detect.down import DownRank
from .detect.goodput import Goodput, GoodputLedger
from .detect.hardware import LedgerEntry
from .detect.lateness import NO_PROGRESS_SECONDS
from .detect.restarts import Restart, RestartWatch
from .events import EventLog
from .gpu_data import GpuCoverage, GpuData
from .hang.checkpoint import CHECKPOINT_KEY
from .hang.triage import HangVerdict
from .hang.watch import HangWatch, Triage, TriageAsk
from .history import History, HistoryView
from .journal import Journal
from .metrics import FrameSummaries, ScaleTracker, Summary
from .model import Frame, Health, RankMap, SourceStatus, as_count, is_missing

# A job whose step has not moved for NO_PROGRESS_SECONDS has made no progress: the ranks'
# logs are read for watchdog timeouts (the header waits longer where polls or samples are
# slow: lateness).
# Signs of a hang besides the step standing still: a rank down, and these two, which a job
# that keeps stepping disproves.
SLOW_SIGNS = ("job_stall", "throughput")
RESOLVED_KEPT = 500  # what `report` lists as come and gone; bounded, whatever the run


def step_counter(frame: Frame, name: str = "step") -> float:
    """The job's step counter ``name`` (or the step of its last checkpoint); NaN when it
    has none, or one no job counts to (``as_count``)."""
    return as_count(frame.job.get(name, math.nan))


@dataclass(frozen=True)
class Progress:
    """The job's step, and since when it has not moved (None: it moves, or is unknown)."""

    step: float = float("nan")
    still_since: float | None = None
    moving: bool = False  # the step moved more than once since it last stood still
    moves: tuple[float, ...] = ()  # when the step last moved, the last two times at most

    def stalled_for(self, now: float) -> float:
        return 0.0 if self.still_since is None else max(0.0, now - self.still_since)

    def stalled(self, now: float) -> bool:
        return self.stalled_for(now) >= NO_PROGRESS_SECONDS

    def moving_since(self, moment: float | None) -> bool:
        """Moving, with both of its last moves after ``moment`` (None: any time): the job
        ran on past what happened then, not only unwound one step."""
        if moment is None:
            return self.moving
        return self.moving and len(self.moves) == 2 and self.moves[0] > moment


@dataclass(frozen=True)
class Analysis:
    """What one poll means. ``frame`` is None until the source has answered once."""

    status: SourceStatus
    rank_map: RankMap
    frame: Frame | None = None
    anomalies: tuple[Anomaly, ...] = ()  # active, most severe first
    resolved: tuple[Anomaly, ...] = ()  # ended of late, newest first
    hang: HangVerdict | None = None
    up: tuple[bool, ...] = ()
    progress: Progress = Progress()
    summaries: Mapping[str, Summary | None] = field(default_factory=dict)
    scales: Mapping[str, tuple[float, float] | None] = field(default_factory=dict)
    history: HistoryView | None = None
    warmed_up: bool = False  # the detectors have seen enough for "no anomalies" to mean it
    ledger: Mapping[int, tuple[LedgerEntry, ...]] = field(default_factory=dict)
    down_ranks: Mapping[int, DownRank] = field(default_factory=dict)
    # Who else is on the nodes the advice drains, as the engine last learned (by node).
    neighbours: Mapping[str, NodeTenants] = field(default_factory=dict)
    goodput: Goodput = field(default_factory=Goodput)
    gpu: GpuCoverage = field(default_factory=GpuCoverage)  # maps fold where it covers none
    restarts: tuple[Restart, ...] = ()  # the restarts of the last hour on record, newest first
    # The ranks down that the job's step went on without: they stopped nothing.
    left_behind: frozenset[int] = frozenset()
    # How much of a late start's past is read (0..1) while it is read behind the polls (no
    # verdict until then); None: not reading.
    catching_up: float | None = None
    # The anomalies folded by what explains what (one per root): worked out from
    # ``anomalies`` whenever an Analysis is made, so a copy with others never disagrees.
    incidents: tuple[Incident, ...] = field(init=False, default=())
    # What to do about them (drain, reset, watch, restart), likewise.
    actions: tuple[Action, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "incidents",
                           incidents(self.anomalies, self.rank_map, self.left_behind))
        seen = Seen(self.rank_map, self.frame, self.down_ranks, self.ledger, self.hang,
                    self.neighbours, self._job_stop(), self.left_behind)
        object.__setattr__(self, "actions", advise(self.incidents, seen))

    def _job_stop(self) -> JobStop | None:
        """The job's step and since when it stands still, for a restart's cost."""
        if self.frame is None:
            return None
        since = self.progress.still_since
        # goodput's healthy step; until it knows one (a job hung before it saw calm minutes),
        # the last completed step's time
        healthy = self.goodput.baseline_step
        step_seconds = self.step_seconds if is_missing(healthy) else healthy
        return JobStop(self.frame.time, self.progress.step, since, step_seconds,
                       len(self.rank_map))

    @property
    def confirmed(self) -> list[Anomaly]:
        return [a for a in self.anomalies if a.confirmed]

    @property
    def pending(self) -> list[Anomaly]:
        return [a for a in self.anomalies if a.pending]

    @property
    def ranks_up(self) -> int:
        return sum(self.up)

    @property
    def down(self) -> list[int]:
        """The ranks without data, but for those a partial answer left out (``unknown``)."""
        unknown = self.unknown
        return [rank for rank, is_up in enumerate(self.up) if not is_up and rank not in unknown]

    @property
    def unknown(self) -> frozenset[int]:
        """The ranks not answered: the backend's answer was partial (``Frame.unknown``)."""
        return self.frame.unknown if self.frame is not None else frozenset()

    @property
    def step_seconds(self) -> float:
        summary = self.summaries.get("step_time")
        return summary[1] if summary else float("nan")

    @property
    def healthy_source(self) -> bool:
        return self.frame is not None and self.status.health in (Health.OK, Health.SLOW)

    @property
    def verdict_when_clear(self) -> tuple[str, bool]:
        """What to say when no anomaly is active, and whether it is good news: the
        all-clear only from a healthy source whose data the detectors have had time for."""
        if not self.healthy_source:
            return "source down: nothing can be judged", False
        if self.catching_up is not None:
            return f"pending: reading history ({round(100 * self.catching_up)} %)…", False
        if self.frame is not None and self.progress.stalled(self.frame.time):
            return "no progress: not healthy", False
        if not self.warmed_up:
            return "checking…", False
        return "✓ no anomalies", True


class Analyser:
    """Turns each frame into an Analysis, keeping what must outlive a frame: detector
    timers, the history, the journal, the hang triage's last verdict."""

    def __init__(self, settings: AnalysisSettings, job: str, event_log: EventLog | None = None,
                 triage: Triage | None = None) -> None:
        self.settings = settings
        self.hang = HangWatch(triage)
        self.journal = Journal(job, event_log)
        self.detectors = Detectors(settings.detect, parallelism=settings.layout.parallelism)
        self.history = History()
        self.trackers = {m: ScaleTracker(d) for m, d in settings.metrics.items()}
        self.resolved: deque[Anomaly] = deque(maxlen=RESOLVED_KEPT)
        self.goodput = GoodputLedger()
        self.restarts = RestartWatch()
        self.last: Analysis | None = None
        self._step: tuple[float, float] | None = None  # (step, when it was first seen)
        self._moved = False  # the step has moved while we watched
        self._moved_now = False  # ... in the frame being analysed
        self._last_step: float | None = None  # the last step seen, kept across gaps
        self._moves = 0  # moves of the step since it last stood still for a stall
        self._move_times: deque[float] = deque(maxlen=2)  # when it last moved
        self._left: dict[int, float] = {}  # ranks left behind, by when they went down
        self.neighbours: Mapping[str, NodeTenants] = {}  # who else is on drained nodes
        self.gpu = GpuData(m.id for m in settings.metrics.values() if m.from_gpu)

    def analyse(self, frame: Frame, status: SourceStatus, rank_map: RankMap) -> Analysis:
        """The analysis of a new frame (blocking: run it off the UI's thread). Its rank map
        is ``rank_map`` with each rank's GPU named where GPU data has named it."""
        frame, gpu, rank_map, summaries = self._seen(frame, rank_map)
        up = tuple(frame.ranks_up(len(rank_map)))
        progress = self._progress(frame)
        anomalies = self.detectors.update(frame, rank_map, not progress.stalled(frame.time),
                                          summaries)
        behind = self._left_behind(progress)
        hang = self._hang_verdict(frame, anomalies, progress, behind, rank_map)
        anomalies = self._with_hang(hang, anomalies, frame.time)
        self._note_resolved(frame.time, anomalies)
        self.journal.update(frame.time, anomalies, rank_map)
        self.journal.backend(frame.time, status.partial)
        restarts = self._restarts(frame, hang, behind, len(rank_map),
                                  summaries.median("step_time"))
        # a rank the job stepped on without lost it no time: what it lost is a stall's or
        # a slowdown's
        self.goodput.feed(frame.time, step_counter(frame),
                          [a for a in anomalies if not left_behind(a, behind)],
                          summaries.median("step_time"))
        self.last = Analysis(
            status=status, rank_map=rank_map, frame=frame, anomalies=tuple(anomalies),
            resolved=tuple(self.resolved), hang=hang, up=up, progress=progress,
            summaries=summaries.every(),
            scales={m: t.update(summaries.median(m)) for m, t in self.trackers.items()
                    if m in frame.values},
            history=self.history.view(), warmed_up=self.detectors.warmed_up,
            ledger=self.detectors.ledger.entries,
            down_ranks=dict(self.detectors.liveness.down), neighbours=self.neighbours,
            goodput=self.goodput.value(frame.time), gpu=gpu, restarts=restarts,
            left_behind=behind,
        )
        return self.last

    def glance(self, frame: Frame, status: SourceStatus, rank_map: RankMap) -> Analysis:
        """A frame's values alone, with no verdict and no detector fed: what a late start
        shows while it reads the past its detectors need (cheap: the reading runs beside)."""
        frame, gpu, rank_map, summaries = self._seen(frame, rank_map)
        self.last = Analysis(
            status=status, rank_map=rank_map, frame=frame,
            up=tuple(frame.ranks_up(len(rank_map))), progress=self._progress(frame),
            summaries=summaries.every(),
            scales={m: t.update(summaries.median(m)) for m, t in self.trackers.items()
                    if m in frame.values},
            history=self.history.view(), gpu=gpu)
        return self.last

    def _seen(self, frame: Frame, rank_map: RankMap
              ) -> tuple[Frame, GpuCoverage, RankMap, FrameSummaries]:
        """``frame`` bounded, what it says of the GPUs, ``rank_map`` with them named, and its
        summaries, kept in the history."""
        frame = frame.bounded()
        gpu = self.gpu.see(frame, len(rank_map))
        rank_map = self.gpu.marked(rank_map)
        summaries = FrameSummaries(frame)
        self.history.append(frame, len(rank_map), summaries)
        return frame, gpu, rank_map, summaries

    def _restarts(self, frame: Frame, hang: HangVerdict | None, behind: frozenset[int],
                  gpus: int, step_seconds: float) -> tuple[Restart, ...]:
        """The restarts on record after ``frame``: the ranks the hang verdict blames tell
        who died first among ranks gone in the same poll. A healthy step is goodput's, or
        until it knows one, this frame's median. Ranks the job stepped on without are no
        restart's: they are left out."""
        # a tie-break only, among ranks gone together: a verdict not yet sure still names
        # the one the evidence (an agent's exit line, a log's own error) points at
        named = [*hang.behind, *hang.dead] if hang is not None else []
        healthy = self.goodput.baseline.step
        down = {rank: gone for rank, gone in self.detectors.liveness.down.items()
                if rank not in behind}
        return self.restarts.update(frame.time, step_counter(frame), down,
                                    named, step_seconds if is_missing(healthy) else healthy,
                                    gpus, step_counter(frame, CHECKPOINT_KEY),
                                    hang.dead if hang is not None else ())

    def dismiss_restart(self, restart: Restart) -> Analysis | None:
        """The last analysis without ``restart``, which stays off the record from now."""
        self.restarts.dismiss(restart)
        if self.last is not None and self.last.frame is not None:
            self.last = replace(self.last,
                                restarts=self.restarts.current(self.last.frame.time))
        return self.last

    def with_neighbours(self, neighbours: Mapping[str, NodeTenants]) -> Analysis | None:
        """The last analysis with who else is on its drained nodes, kept as the last (and
        for the analyses to come, until told again)."""
        if neighbours != self.neighbours:
            self.neighbours = dict(neighbours)
        if self.last is not None and self.last.neighbours != self.neighbours:
            self.last = replace(self.last, neighbours=self.neighbours)
        return self.last

    def failed(self, status: SourceStatus, rank_map: RankMap) -> Analysis:
        """A poll that failed: the last good analysis stays, under the new status."""
        if self.last is None:
            return Analysis(status=status, rank_map=rank_map)
        return replace(self.last, status=status)

    # -- progress and hangs ----------------------------------------------------------

    def _progress(self, frame: Frame) -> Progress:
        step = step_counter(frame)
        self._moved_now = False
        if is_missing(step):
            return Progress()
        # A step back after a gap in its series has moved only if its value changed, and
        # has stood still since it was first seen at that value: the hang began then, and
        # dumps written since are its evidence.
        self._moved_now = self._last_step is not None and step != self._last_step
        self._moved = self._moved or self._moved_now
        self._last_step = step
        if self._step is None or step != self._step[0]:
            self._step = (step, frame.time)
        moved_at = self._step[1]
        progress = Progress(step, moved_at if frame.time > moved_at else None)
        moving = self._moving(frame.time, progress)
        return replace(progress, moving=moving, moves=tuple(self._move_times))

    def _moving(self, now: float, progress: Progress) -> bool:
        """More than one move since the step last stood still for a stall: one step may
        complete as a hung job unwinds, two are the job running."""
        if self._moved_now:
            last = self._move_times[-1] if self._move_times else None
            ran_on = last is not None and now - last < NO_PROGRESS_SECONDS
            self._moves = self._moves + 1 if ran_on else 1
            self._move_times.append(now)
        elif progress.stalled(now):
            self._moves = 0
        return self._moves >= 2

    def _left_behind(self, progress: Progress) -> frozenset[int]:
        """The ranks down that the job's step has gone on without (moved twice since they
        went down), for as long as they stay down: progress is the arbiter, such a rank
        stopped nothing, and a later stall or hang is not its doing."""
        down = self.detectors.liveness.down
        self._left = {rank: gone.since for rank, gone in down.items()
                      if self._left.get(rank) == gone.since
                      or progress.moving_since(gone.since)}
        return frozenset(self._left)

    def _hang_verdict(self, frame: Frame, anomalies: list[Anomaly], progress: Progress,
                      behind: frozenset[int], rank_map: RankMap) -> HangVerdict | None:
        """The newest verdict from the ranks' logs, a new read asked for now and then while
        the job looks stuck. The ranks left ``behind`` are neither signs nor suspects."""
        kinds = {a.kind for a in anomalies if not left_behind(a, behind)}
        down = {r: gone for r, gone in self.detectors.liveness.down.items() if r not in behind}
        slow = not progress.moving and bool(kinds.intersection(SLOW_SIGNS))
        stuck = progress.stalled(frame.time) or "missing" in kinds or slow
        # Dumps older than the stall (or a move of the step after which it stood still) are
        # of an earlier hang; a hang still open keeps its first ask's (``HangWatch``).
        since = frame.time if self._moved_now else (
            progress.still_since if self._moved else None)

        def ask(ask_id: int) -> TriageAsk:
            flagged = [a.rank for a in anomalies if a.rank is not None]
            suspects = dict.fromkeys([*sorted(down), *flagged])
            return TriageAsk(ask_id, frame.time, rank_map, tuple(suspects), tuple(sorted(down)),
                             since)

        if stuck:
            self.hang.observe(frame)
        return self.hang.update(frame.time, stuck, ask, progress.moving, down)

    def _with_hang(self, hang: HangVerdict | None, anomalies: Sequence[Anomaly],
                   now: float) -> list[Anomaly]:
        others = [a for a in anomalies if a.kind != "hang"]
        suspicion = self.hang.suspicion(now) if hang is None else None
        if suspicion is not None:
            return sorted([suspicion, *others], key=lambda a: a.order)
        if hang is None:
            return others
        return sorted([self.hang.anomaly(hang, now), *others], key=lambda a: a.order)

    def with_newest_hang(self) -> Analysis | None:
        """The last analysis with the newest finished hang verdict, asking for no new read:
        for `ranktop report`, once it has waited for the triage."""
        last = self.last
        if last is None or last.frame is None:
            return last
        hang = self.hang.current()
        if hang is last.hang:
            return last
        now = last.frame.time
        anomalies = self._with_hang(hang, last.anomalies, now)
        self._note_resolved(now, anomalies)
        self.journal.update(now, anomalies, last.rank_map)
        self.last = replace(last, hang=hang, anomalies=tuple(anomalies),
                            resolved=tuple(self.resolved))
        return self.last

    def _note_resolved(self, now: float, anomalies: list[Anomaly]) -> None:
        current = {a.key for a in anomalies}
        ended = [a for a in (self.last.anomalies if self.last else ()) if a.key not in current]
        self.resolved.extendleft(ended)

