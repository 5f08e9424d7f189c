"""One poll of a source and its analysis, the same for the console and `ranktop report`:
source.poll() -> Frame -> Analyser -> Analysis.

Whatever fails on the way (the source in a way it did not foresee, or the analysis itself)
leaves the last analysis on screen under a status that says so: never "ok" over data that
is no longer updated.

Hang triage reads the ranks' logs and Flight Recorder dumps in a worker of its own
(``TriageWorker``): a poll asks for it and shows the newest verdict it finished, never
waiting. `ranktop report` waits for it with ``settle``.

Before its first analysis, a pipeline asks the source what it held of the minutes before
(``ranktop.tui.core.lookback``), so that a console or report started late judges the loss,
the throughput and the ranks gone as one that had been watching."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from ranktop.tui.core.analysis import Analyser, Analysis
from ranktop.tui.core.events import EventLog
from ranktop.tui.core.lookback import WINDOWED_JOB_VALUES
from ranktop.tui.core.model import Health, SourceStatus
from ranktop.tui.core.text import plain
from ranktop.tui.flight.watch import FlightDumps
from ranktop.tui.logs.rank_logs import RankLogs
from ranktop.tui.logs.triage_worker import TriageWorker
from ranktop.tui.settings.config import Settings
from ranktop.tui.sources.base import Source

# How long a triage run waits for the dumps' reading (its own thread); a longer read is
# judged by the run after it.
FLIGHT_WAIT_SECONDS = 5.0


def hang_triage(settings: Settings, source: Source, logs: RankLogs) -> TriageWorker | None:
    """A worker reading the ranks' ``logs`` and Flight Recorder dumps for a hang's verdict
    (None: the job's logs and dumps are nowhere to be read)."""
    dumps = settings.flight_recorder or source.flight_spec
    flight = FlightDumps(dumps, wait_seconds=FLIGHT_WAIT_SECONDS).verdict if dumps else None
    reader = logs.triage_batches if logs.spec else None
    if reader is None and flight is None:
        return None
    return TriageWorker(reader, dumps=flight, log_spec=logs.spec)


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
        self.analyser = Analyser(settings, source.job_name, event_log, self.triage)
        self.error = ""  # why the last poll failed; "" when it did not
        self.refresh_seconds = settings.refresh_seconds
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
            if not self._looked_back:
                await asyncio.to_thread(self._look_back)
            analysis = await asyncio.to_thread(self.analyser.analyse, frame,
                                               self.source.status(), self.source.rank_map)
        except Exception as error:  # a bug must not stop the polling or hide behind "ok"
            return self._failed(error, "analysis failed: ")
        self.error = ""
        return analysis

    async def settle(self, analysis: Analysis, timeout: float) -> Analysis:
        """``analysis`` (the last poll's) with the verdict of the hang triage it asked for,
        waiting up to ``timeout`` seconds for the triage to finish; a failed poll's as it
        is. The console never waits: this is for one-shot users such as `ranktop report`."""
        if self.error or self.analyser.last is None:
            return analysis
        if self.triage is not None:
            await asyncio.to_thread(self.triage.wait, timeout)
        return await asyncio.to_thread(self.analyser.with_newest_hang) or analysis

    def _look_back(self) -> None:
        """Once, before the first analysis: start from what the source held before it."""
        self._looked_back = True
        detectors = self.analyser.detectors
        try:
            found = self.source.lookback(WINDOWED_JOB_VALUES, detectors.lookback_seconds,
                                         self.refresh_seconds)
        except Exception:  # without its past, a late start judges from its own polls
            return
        if found is not None:
            detectors.warm(found)

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
