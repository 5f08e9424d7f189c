"""One poll of a source and its analysis, the same for the console and `ranktop report`:
source.poll() -> Frame -> Analyser -> Analysis.

Whatever fails on the way (the source in a way it did not foresee, or the analysis itself)
leaves the last analysis on screen under a status that says so: never "ok" over data that
is no longer updated.

Hang triage reads the ranks' logs and Flight Recorder dumps in a worker of its own
(``TriageWorker``): a poll asks for it and shows the newest verdict it finished, never
waiting. `ranktop report` waits for it with ``settle``.

Before its first analysis, a pipeline catches up on what came before it: from a source that
keeps its past, its analyser is brought to the first poll through the frames of the window
the detectors need (``replay.Replay.bring``), so that a console or report started late shows
each anomaly from its real start, confirmed when it was, a rank dead before the start as
down since then, and a counter that rose before as raised; from any other source it starts
from the job's windowed values and the ranks seen (``ranktop.tui.core.detect.lookback``), and
goodput from the hour of the step counter before it (``replay.seed_goodput``). A frame
analysed later than a poll may run (after a slow catch-up) says how old its data is.

Who else is on a node the advice drains is asked of the source after the analysis
(``neighbours``), and the analysis carries it: the drain lists them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace

from ..core.analysis import Analyser, Analysis
from ..core.detect.lateness import late_after
from ..core.detect.lookback import WINDOWED_JOB_VALUES
from ..core.events import EventLog
from ..core.model import Health, SourceStatus
from ..core.moment import ago, aligned, shown
from ..core.text import plain
from ..logs.rank_logs import RankLogs
from ..settings.config import Settings
from ..sources.base import Source
from .neighbours import NeighbourCache
from .replay import Replay, seed_goodput
from .triage import hang_triage


class Pipeline:
    """A source and the analysis of its frames; ``poll`` never blocks the event loop."""

    def __init__(self, settings: Settings, source: Source,
                 event_log: EventLog | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.source = source
        self.clock = clock
        self.polling_since: float | None = None  # when the poll in flight began
        self.logs = RankLogs(settings.log_spec or source.log_spec)
        self.triage = hang_triage(settings, source, self.logs)
        self.settings = settings
        self.event_log = event_log
        self.analyser = Analyser(settings, source.job_name, event_log, self.triage)
        self.error = ""  # why the last poll failed; "" when it did not
        self.refresh_seconds = settings.refresh_seconds
        self.neighbours = NeighbourCache(source, clock)
        self._looked_back = False

    @property
    def latest(self) -> Analysis:
        """The newest analysis, or an empty one before the first poll."""
        if self.analyser.last is not None:
            return self.analyser.last
        return Analysis(self.source.status(), self.source.rank_map)

    async def poll(self) -> Analysis:
        """Poll the source once and analyse what it gave (a failed poll keeps the last
        analysis under the source's new status)."""
        self.polling_since = self.clock()
        try:
            frame = await self.source.poll()
        except Exception as error:
            return self._failed(error, "")
        finally:
            self.polling_since = None
        try:
            caught_up = self._looked_back
            if not caught_up:
                await asyncio.to_thread(self._look_back, frame.time)
            status = self._aged(self.source.status(), frame.time, caught_up)
            analysis = await asyncio.to_thread(self.analyser.analyse, frame, status,
                                               self.source.rank_map)
            if analysis.actions:
                analysis = await asyncio.to_thread(self._with_neighbours, analysis)
        except Exception as error:  # a bug must not stop the polling or hide behind "ok"
            return self._failed(error, "analysis failed: ")
        self.error = ""
        return analysis

    def _aged(self, status: SourceStatus, taken: float, caught_up: bool) -> SourceStatus:
        """``status``, or, where the frame taken at ``taken`` is analysed later than a poll
        may run (a slow catch-up on the past before the first one), how old its data is:
        never "ok" over data minutes old."""
        age = self.clock() - taken
        if status.health is not Health.OK or age <= late_after(self.refresh_seconds,
                                                               status.poll_seconds):
            return status
        why = "the analysis was late" if caught_up else (
            f"catching up on the job's past took {ago(age - status.poll_seconds)}")
        return replace(status, health=Health.SLOW, since=taken,
                       message=f"data of {shown(taken)}, {ago(age)} old when analysed: "
                               f"{why}; the next poll is fresh")

    def _with_neighbours(self, analysis: Analysis) -> Analysis:
        """``analysis`` with who else is on the nodes it drains (asked of the source now
        and then: ``NeighbourCache``)."""
        return self.analyser.with_neighbours(self.neighbours.of(analysis.actions)) or analysis

    async def settle(self, analysis: Analysis, timeout: float) -> Analysis:
        """``analysis`` (the last poll's) with the verdict of the hang triage it asked for,
        waiting up to ``timeout`` seconds for the triage to finish; a failed poll's as it
        is. The console never waits: this is for one-shot users such as `ranktop report`."""
        if self.error or self.analyser.last is None:
            return analysis
        if self.triage is not None:
            await asyncio.to_thread(self.triage.wait, timeout)
        return await asyncio.to_thread(self.analyser.with_newest_hang) or analysis

    def _look_back(self, now: float) -> None:
        """Once, before the first analysis: start from what the source held before it."""
        self._looked_back = True
        if self._catch_up(now):
            return
        detectors = self.analyser.detectors
        try:
            found = self.source.lookback(WINDOWED_JOB_VALUES, detectors.lookback_seconds,
                                         self.refresh_seconds)
        except Exception:  # without its past, a late start judges from its own polls
            return
        if found is not None:
            detectors.warm(found)
        seed_goodput(self.analyser, self.source, now)

    def _catch_up(self, now: float) -> bool:
        """Bring the analyser to the last refresh step before ``now`` through the source's past,
        as a console watching since long before would have it; whether it could. The past
        is not written to the event log: what is active at the first poll is, as before."""
        if not self.source.keeps_past:
            return False
        replay = Replay(self.settings, self.source)
        # To the newest step of the grid before now: a step earlier would leave up to two
        # refreshes unseen before the first poll, where a blip (an XID just before its rank
        # died) is lost to a late start.
        last = aligned(now, self.refresh_seconds)
        last -= self.refresh_seconds if last >= now else 0.0
        try:
            caught_up = replay.bring(self._without_events, last)
        except Exception:  # as a source without a past: from the lookback and its own polls
            return False
        finally:
            replay.close()
        if caught_up is None:
            return False
        # The anomalies active now are journalled at the first poll, each from its start,
        # as a console started now always did; the ones that came and went before, not.
        caught_up.journal.log, caught_up.journal.active = self.event_log, {}
        self.analyser = caught_up
        return True

    def _without_events(self, triage: object) -> Analyser:
        return Analyser(self.settings, self.source.job_name, None, self.triage)

    def _failed(self, error: Exception, prefix: str) -> Analysis:
        self.error = prefix + (str(error) or error.__class__.__name__)
        status = self.source.status()
        if status.health in (Health.OK, Health.SLOW) or prefix:
            # The source did not see this failure coming: say it here.
            health = Health.STALE if self.analyser.last is not None else Health.ERROR
            status = SourceStatus(status.name, health, since=self.clock(),
                                  message=plain(self.error, 300), last_ok=status.last_ok,
                                  detail=status.detail)
        return self.analyser.failed(status, self.source.rank_map)
