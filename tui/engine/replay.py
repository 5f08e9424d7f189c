"""Any past moment of the job, judged as the live console judged it then.

The analysis at a moment T is what a fresh analyser makes of the frames before it: the
source gives the frame a poll would have given at each refresh step of the window the
detectors declare (``Detectors.replay_seconds``), oldest first, and each is analysed at its
own time. Before them the analyser is warmed as a console watching since long before
would be: the job's windowed values and the ranks seen come from the source's lookback at
T, goodput's hour before it from the step counter's past (``seed_goodput``), and the
hardware ledger sees a frame every ``LEDGER_STEP_SECONDS`` of its window (on whole
minutes, shared by the replays of neighbouring moments). An
anomaly already there at the window's first frame began before it: the replay then looks
further back, up to the ledger's window, to where the job began. The hang triage of the
last frame is waited for, as `ranktop report` waits for it.

Moments fall on the refresh grid (``core.moment.aligned``). Fetched frames are kept
(``past_frames``), so stepping back one refresh fetches one frame more; the newest replay's
analyser is kept too, so stepping forward analyses only the frames in between, and so are
copies of it every ``CHECKPOINT_EVERY`` frames of its last window (bounded), so stepping
back goes on from the nearest one before. Analyses of moments already shown are kept (a
few) and given again at once, and so are those of moments prepared before they are asked
(``prepare``, the engine's prefetch): their frames are fetched outside the replay's lock and
analysed under it, giving way, between two frames, to any moment asked meanwhile.

The hang triage of a moment reads the ranks' logs and Flight Recorder dumps as they stood
then: lines stamped after it and dumps written after it are left out (the logs' tails are
read, as live: a moment whose lines lie further back than a tail holds less evidence)."""

from __future__ import annotations

import copy
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from ..core.analysis import Analyser, Analysis
from ..core.detect.detectors import Detectors
from ..core.detect.goodput import (
    HOUR_SECONDS,
    JOB_LOOKBACK_SECONDS,
    JOB_LOOKBACK_STEP_SECONDS,
    SEED_STEP_SECONDS,
)
from ..core.detect.hardware import WINDOW_SECONDS
from ..core.detect.lookback import WINDOWED_JOB_VALUES
from ..core.model import Health, SourceStatus
from ..core.moment import aligned, shown
from ..logs.rank_logs import RankLogs
from ..logs.triage_worker import TriageWorker
from ..settings.config import Settings
from ..sources.base import Source
from .past_frames import PastFrames
from .triage import hang_triage

LEDGER_STEP_SECONDS = 60.0  # the ledger's view of the minutes before the replayed window
REPLAY_VALUES = 20_000_000  # the most values a replay analyses (frames x ranks x metrics)
MIN_REPLAY_FRAMES = 5
LONGER_AT_ONCE = 1.5  # a budget this close to the detectors' window is replayed in one go
CHECKPOINT_EVERY = 10  # frames between copies of a replay's analyser, in its last window
CHECKPOINTS_KEPT = 32
KEPT_VALUES = 1_000_000  # analyses and copies kept: at most this many frame values' worth
ANALYSES_KEPT = 16  # moments already replayed, given again at once
TRIAGE_WAIT_SECONDS = 10.0  # for the hang verdict of the moment
TRIAGE_GLANCE_SECONDS = 0.1  # a prepared moment waits for it this long at a time


class GaveWay(Exception):
    """A moment being prepared gave way to one asked: what it had done is kept."""


class NothingThen(Exception):
    """The source has nothing at that moment (before the job, past its retention, or no
    history at all): the message says which, in one line."""


@dataclass
class _Replayed:
    """An analyser brought to ``moment``, and its hang triage."""

    analyser: Analyser
    triage: TriageWorker | None
    moment: float = float("-inf")
    first: float = float("inf")  # its first frame's time
    asked: int = 0  # refreshes of its last stretch since the job's first frame ...
    gaps: int = 0  # ... and those the source had no frame for
    checkpoints: list[tuple[float, Analyser]] = field(default_factory=list)  # copies on
    # the way, in its last window: a step back goes on from the nearest before


class Replay:
    """Replays moments of ``source``'s past through fresh analysers (blocking calls: run
    them in a thread). One replay at a time."""

    def __init__(self, settings: Settings, source: Source,
                 triage_wait: float = TRIAGE_WAIT_SECONDS, logs: RankLogs | None = None
                 ) -> None:
        self.settings = settings
        self.source = source
        self.step = settings.refresh_seconds
        self.triage_wait = triage_wait
        self.replay_seconds = Detectors(settings.detect).replay_seconds
        # the live pipeline's, where given: the ranks' files it found are not looked for again
        self._logs = logs or RankLogs(settings.log_spec or source.log_spec)
        self.frames = PastFrames(source)
        self._analyses: OrderedDict[float, Analysis] = OrderedDict()
        self._last: _Replayed | None = None  # the newest replay, to go on from
        self._checkpoints: OrderedDict[float, Analyser] = OrderedDict()
        self._lock = threading.Lock()
        self._asking = threading.Lock()  # guards ``_asked``
        self._asked = 0  # callers of ``at`` and ``bring`` waiting for the replay or in it
        self._preparing = False  # the replay under way is a prepared one: it gives way
        # told (frames read, frames to read) as a replay goes on: a late start's progress
        self.progress: Callable[[int, int], None] | None = None

    def at(self, moment: float) -> Analysis:
        """The analysis the live console showed at ``moment`` (epoch seconds), brought
        down to the refresh grid. Raises NothingThen, or as the source's poll does."""
        if not self.source.keeps_past:
            raise NothingThen(f"{self.source.name} keeps no history: only now can be shown")
        moment = aligned(moment, self.step)
        with self._asked_for(), self._lock:
            if moment in self._analyses:
                self._analyses.move_to_end(moment)
                return self._analyses[moment]
            return self._keep(moment, self._replay(moment))

    def prepare(self, moment: float, go_on: Callable[[], bool] = lambda: True) -> bool:
        """Replay ``moment`` before it is asked, for ``at`` to give at once: its frames are
        fetched first without holding the replay (``go_on()`` asked between two: it may wait
        for a live poll to end; False stops), then analysed; it stops, between two frames,
        as soon as ``at`` or ``bring`` is called. Whether the moment's analysis is kept."""
        if not self.source.keeps_past:
            return False
        moment = aligned(moment, self.step)
        with self._lock:
            if moment in self._analyses:
                return True
            start = self._start(moment)
        times = [t for t in self._window(moment, self.replay_seconds)
                 if start is None or t > start]
        if not go_on():
            return False
        for _ in self.frames.at(times):
            if self._asked or not go_on():
                return False
        with self._lock:
            if moment in self._analyses:
                return True
            if self._asked:
                return False
            self._preparing = True
            try:
                self._keep(moment, self._replay(moment))
            except (GaveWay, NothingThen):
                return False
            finally:
                self._preparing = False
        return True

    @property
    def analyses_kept(self) -> int:
        """How many moments' analyses are kept at most (fewer the larger the job)."""
        return self._kept(ANALYSES_KEPT)

    @contextmanager
    def _asked_for(self) -> Iterator[None]:
        """Counted among the callers a prepared replay gives way to, while inside."""
        with self._asking:
            self._asked += 1
        try:
            yield
        finally:
            with self._asking:
                self._asked -= 1

    def _keep(self, moment: float, analysis: Analysis) -> Analysis:
        self._analyses[moment] = analysis
        while len(self._analyses) > self._kept(ANALYSES_KEPT):
            self._analyses.popitem(last=False)
        return analysis

    def bring(self, make: Callable[[TriageWorker | None], Analyser], moment: float
              ) -> Analyser | None:
        """An analyser made by ``make`` (given its hang triage) brought to ``moment`` as a
        console watching since long before would have it: a late start's. None when the
        source has no past, or nothing then."""
        if not self.source.keeps_past:
            return None
        with self._asked_for(), self._lock:
            try:
                return self._judged(moment, make).analyser
            except NothingThen:
                return None

    def _replay(self, moment: float) -> Analysis:
        start = self._nearest_before(moment)
        try:
            replayed = (self._judged(moment, self._fresh) if start is None
                        else self._went_on(start, moment))
        finally:  # also when it gave way: the copies made on the way are good
            if start is not None:
                self._keep_checkpoints(start)
        self._keep_checkpoints(replayed)
        self._last = replayed
        analyser = replayed.analyser
        if replayed.triage is not None:
            self._wait_for_triage(replayed.triage)
        newest = analyser.with_newest_hang()
        assert newest is not None and newest.frame is not None
        notes = [*self.source.past_said()]
        if replayed.gaps:
            notes.append(f"no data at {replayed.gaps} of the {replayed.asked} refreshes "
                         "before it (a gap in scraping?)")
        if notes:
            note = "; ".join([newest.status.message, *notes])
            newest = replace(newest, status=replace(newest.status, message=note))
        return newest

    def _wait_for_triage(self, triage: TriageWorker) -> None:
        """The hang triage's verdict waited for; a prepared moment gives way meanwhile."""
        if not self._preparing:
            triage.wait(self.triage_wait)
            return
        for _ in range(math.ceil(self.triage_wait / TRIAGE_GLANCE_SECONDS)):
            if triage.wait(TRIAGE_GLANCE_SECONDS):
                return
            if self._giving_way():
                raise GaveWay

    def _giving_way(self) -> bool:
        """Whether the moment being prepared gives way now: one is asked."""
        return self._preparing and self._asked > 0

    def _start(self, moment: float) -> float | None:
        """The moment of the analyser a replay of ``moment`` goes on from: the newest
        replay's or a checkpoint's, the nearest before within the detectors' window; None:
        it starts anew."""
        start = moment - self.replay_seconds
        last = self._last
        kept = max((t for t in self._checkpoints if start <= t < moment), default=None)
        if last is not None and start <= last.moment < moment and (
                kept is None or last.moment >= kept):
            return last.moment
        return kept

    def _nearest_before(self, moment: float) -> _Replayed | None:
        """The analyser to go on from (``_start``): the newest replay's itself, or a copy
        of a checkpoint's; None: start anew."""
        start = self._start(moment)
        if start is None:
            return None
        if self._last is not None and self._last.moment == start:
            return self._last
        analyser = _copied(self._checkpoints[start])
        return _Replayed(analyser, analyser.hang.triage, start)  # type: ignore[arg-type]

    def _keep_checkpoints(self, replayed: _Replayed) -> None:
        for moment, analyser in replayed.checkpoints:
            self._checkpoints[moment] = analyser
        replayed.checkpoints = []
        while len(self._checkpoints) > self._kept(CHECKPOINTS_KEPT):
            self._checkpoints.popitem(last=False)

    def _kept(self, most: int) -> int:
        """How many analyses or analysers to keep: ``most`` of a small job's, fewer of a
        large one's (``KEPT_VALUES`` of a frame's values' worth), never fewer than 2."""
        return max(2, min(most, KEPT_VALUES // max(1, self.frames.values_per_frame)))

    def _fresh(self, triage: TriageWorker | None) -> Analyser:
        return Analyser(self.settings, self.source.job_name, None, triage)

    def _judged(self, moment: float, make: Callable[[TriageWorker | None], Analyser]
                ) -> _Replayed:
        """A new analyser brought to ``moment`` over the detectors' window; again over a
        longer one when an anomaly was already there at its first frame (its start lies
        before: a longer look finds it, up to the ledger's window and the frame budget)."""
        most = min(WINDOW_SECONDS, self._most_frames() * self.step)
        if most <= LONGER_AT_ONCE * self.replay_seconds:  # a second look would add little
            return self._replayed(make, self._window(moment, most), ledger_before=True)
        window = self._window(moment, self.replay_seconds)
        replayed = self._replayed(make, window, ledger_before=True)
        if replayed.first > window[0] or not _clipped(replayed):
            return replayed  # the job's first frame is within the window: nothing before
        longer = self.frames.since_the_job_began(self._window(moment, most), window[0])
        if len(longer) <= len(window):
            return replayed
        return self._replayed(make, longer, ledger_before=False)

    def _most_frames(self) -> int:
        """How many frames a replay may analyse: ``REPLAY_VALUES`` worth (at 100,000 ranks
        a few seconds' worth, at 16,384 the detectors' whole window), never fewer than
        ``MIN_REPLAY_FRAMES``."""
        per_frame = self.frames.values_per_frame or len(self.source.rank_map) * len(
            self.settings.metrics)
        return max(MIN_REPLAY_FRAMES, REPLAY_VALUES // max(1, per_frame))

    def _replayed(self, make: Callable[[TriageWorker | None], Analyser],
                  times: Sequence[float], ledger_before: bool) -> _Replayed:
        triage = hang_triage(self.settings, self.source, self._logs)
        replayed = _Replayed(make(triage), triage)
        self._warm(replayed.analyser, times[0], ledger_before)
        return self._went_on(replayed, times[-1], times)

    def _went_on(self, replayed: _Replayed, moment: float,
                 times: Sequence[float] | None = None) -> _Replayed:
        """``replayed`` brought on to ``moment`` through the frames after its own."""
        if times is None:
            times = [t for t in self._window(moment, self.replay_seconds)
                     if t > replayed.moment]
        analyser = replayed.analyser
        if replayed.triage is not None:  # the logs and dumps as they stood then
            replayed.triage.until = moment
        analysed = []
        for index, (frame, rank_map) in enumerate(self.frames.at(times), start=1):
            if self.progress is not None:
                self.progress(index, len(times))
            if self._giving_way():  # where it got to stays true
                replayed.moment = max([replayed.moment, *analysed])
                raise GaveWay
            if frame is not None:
                analysed.append(frame.time)
                replayed.first = min(replayed.first, frame.time)
                analyser.analyse(frame, _status(self.source, frame.time), rank_map)
                if (index % CHECKPOINT_EVERY == 0 and frame.time < moment
                        and frame.time >= moment - self.replay_seconds):
                    replayed.checkpoints.append((frame.time, _copied(analyser)))
        if analyser.last is None or analyser.last.frame is None:
            raise NothingThen(f"nothing at {shown(moment)}: the job had not started, or the "
                              "backend no longer holds that time")
        replayed.moment = moment
        if analysed:  # the refreshes since the job's first frame that had none
            replayed.asked = sum(1 for t in times if t >= analysed[0])
            replayed.gaps = replayed.asked - len(analysed)
        return replayed

    def _window(self, moment: float, seconds: float) -> list[float]:
        """The refresh grid's times over the ``seconds`` up to ``moment``."""
        count = int(seconds // self.step)
        return [moment - (count - i) * self.step for i in range(count + 1)]

    def _warm(self, analyser: Analyser, start: float, ledger: bool) -> None:
        """The analyser as a console watching long before ``start`` would have it: the
        job's windowed values and the ranks seen; with ``ledger``, the hardware ledger's
        view of its window before ``start`` (a frame a minute)."""
        detectors = analyser.detectors
        try:
            found = self.source.lookback(WINDOWED_JOB_VALUES, detectors.lookback_seconds,
                                         self.step, until=start)
        except Exception:  # as a live console's late start: judged from the frames alone
            found = None
        if found is not None:
            detectors.warm(found)
        seed_goodput(analyser, self.source, start)
        if ledger:
            first = math.ceil((start - WINDOW_SECONDS) / LEDGER_STEP_SECONDS + 1)
            times = _grid(first * LEDGER_STEP_SECONDS, start, LEDGER_STEP_SECONDS)
            for frame, rank_map in self.source.frames_at(times):
                detectors.warm_ledger(frame, rank_map)

    def close(self) -> None:
        """Let go of what is kept."""
        with self._asked_for(), self._lock:
            self.frames.clear()
            self._analyses.clear()
            self._checkpoints.clear()
            self._last = None


def seed_goodput(analyser: Analyser, source: Source, until: float) -> None:
    """Give ``analyser``'s goodput the hour of the job's step counter before ``until``,
    where ``source`` keeps it, and the job's start if it lies further back (coarsely)."""
    ledger, hour = analyser.goodput, until - HOUR_SECONDS
    try:
        found = source.job_past(("step",), HOUR_SECONDS, SEED_STEP_SECONDS, until)
        if found is None:
            return
        ledger.seed(found.get("step", ()), hour)
        analyser.restarts.seed(found.get("step", ()))
        if ledger.job_older_than_seed:
            older = source.job_past(("step",), JOB_LOOKBACK_SECONDS,
                                    JOB_LOOKBACK_STEP_SECONDS, hour)
            ledger.seed_job((older or {}).get("step", ()), hour - JOB_LOOKBACK_SECONDS)
    except Exception:  # without its past, goodput covers what is watched
        return


def _copied(analyser: Analyser) -> Analyser:
    """A copy of ``analyser`` to go on from apart, sharing what it never changes: its
    settings, its hang triage's worker and its last analysis (frozen)."""
    shared = (analyser.settings, analyser.hang.triage, analyser.last, analyser.journal.log)
    return copy.deepcopy(analyser, {id(thing): thing for thing in shared if thing is not None})


def _clipped(replayed: _Replayed) -> bool:
    """Whether an anomaly of the replay held from its first frame on, or was dated from
    what came before it (the ledger's minutes): it began earlier than the window shows."""
    last = replayed.analyser.last
    return last is not None and any(a.since <= replayed.first + 1e-6 for a in last.anomalies)


def _grid(start: float, end: float, step: float) -> list[float]:
    """Times ``step`` apart from ``start`` up to, not including, ``end``."""
    count = max(0, int((end - start) // step))
    return [start + i * step for i in range(count) if start + i * step < end]


def _status(source: Source, moment: float) -> SourceStatus:
    """The status a replayed frame is shown under: the backend's answer about that time."""
    return SourceStatus(source.name, Health.OK, since=moment, last_ok=moment,
                        message=f"at {shown(moment)}")

