"""One poll of a source and its analysis, the same for the console and `ranktop report`:
source.poll() -> Frame -> Analyser -> Analysis.

Whatever fails on the way (the source in a way it did not foresee, or the analysis itself)
leaves the last analysis on screen under a status that says so: never "ok" over data that
is no longer updated.

Hang triage reads the ranks' logs and Flight Recorder dumps in a worker of its own
(``TriageWorker``): a poll asks for it and shows the newest verdict it finished, never
waiting. `ranktop report` waits for it with ``settle``.

A pipeline catches up on what came before its first poll: from a source that keeps its
past, an analyser is brought to the first poll through the frames of the window the
detectors need (``replay.Replay.bring``), so that a console or report started late shows
each anomaly from its real start, confirmed when it was, a rank dead before the start as
down since then, and a counter that rose before as raised. That reading takes a while (a
minute at a large job on a busy machine), so it runs behind: meanwhile each poll's frame is
shown at once, with no verdict yet (``Analysis.catching_up`` says how far the reading is),
and the frames polled meanwhile are kept; once read, the caught-up analyser goes through
them and takes over. From any other source it starts from the job's windowed values and the
ranks seen (``ranktop.tui.core.detect.lookback``), and goodput from the hour of the step
counter before it (``replay.seed_goodput``).

Who else is on a node the advice drains is asked of the source after the analysis
(``neighbours``), and the analysis carries it: the drain lists them."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace

from ..core.analysis import Analyser, Analysis
from ..core.detect.lateness import late_after
from ..core.detect.lookback import WINDOWED_JOB_VALUES
from ..core.events import EventLog
from ..core.model import Frame, Health, RankMap, SourceStatus
from ..core.moment import ago, aligned, shown
from ..core.text import plain
from ..logs.rank_logs import RankLogs
from ..settings.config import Settings
from ..sources.base import Source
from .neighbours import NeighbourCache
from .replay import Replay, seed_goodput
from .triage import hang_triage

# How long the first poll waits for the past before it is shown without verdicts; a small job's
# past is read by then, and its first screen has them. RANKTOP_CATCH_UP_WAIT overrides it
# (seconds, or "inf": wait however long, as the tests do, whatever the machine's load).
CATCH_UP_WAIT_SECONDS = 1.5
CATCH_UP_WAIT_VARIABLE = "RANKTOP_CATCH_UP_WAIT"
# Frames polled while the past is read, kept for the caught-up analyser to go through: past
# this many (minutes of polls), the oldest go, and the analyser judges across the gap.
BEHIND_MOST = 120


@dataclass
class CatchUp:
    """A late start's reading of the past, running behind the live polls."""

    reading: Future  # the caught-up Analyser, or None where the past could not be read
    seconds: float  # how much of the past it reads
    provisional: Analyser  # glances at each live frame meanwhile (values, no verdict)
    behind: deque[tuple[Frame, SourceStatus, RankMap]]
    done: int = 0  # frames read of ``total``, in the current look
    total: int = 0
    looks: int = 1  # a second look reads further back, where an anomaly began before

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


class Pipeline:
    """A source and the analysis of its frames; ``poll`` never blocks the event loop."""

    def __init__(self, settings: Settings, source: Source,
                 event_log: EventLog | None = None,
                 clock: Callable[[], float] = time.time,
                 catch_up_wait: float | None = None) -> None:
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
        self._catch_up: CatchUp | None = None  # the past being read behind the polls
        self.catch_up_wait = catch_up_wait_seconds() if catch_up_wait is None else catch_up_wait

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
                await asyncio.to_thread(self._look_back, frame.time)
            status = self._aged(self.source.status(), frame.time)
            analysis = await asyncio.to_thread(self._analyse, frame, status)
            if analysis.actions:
                analysis = await asyncio.to_thread(self._with_neighbours, analysis)
        except Exception as error:  # a bug must not stop the polling or hide behind "ok"
            return self._failed(error, "analysis failed: ")
        self.error = ""
        return analysis

    def _analyse(self, frame: Frame, status: SourceStatus) -> Analysis:
        """The analysis of ``frame``: by the caught-up analyser once the past is read (it
        goes through the frames polled meanwhile first), the frame alone until then."""
        catch_up = self._catch_up
        if catch_up is not None and catch_up.reading.done():
            self._take_over(catch_up)
            catch_up = None
        if catch_up is None:
            return self.analyser.analyse(frame, status, self.source.rank_map)
        catch_up.behind.append((frame, status, self.source.rank_map))
        shown_now = catch_up.provisional.glance(frame, status, self.source.rank_map)
        return _reading(shown_now, catch_up)

    def _take_over(self, catch_up: CatchUp) -> None:
        """The caught-up analyser, brought through the frames polled while it read, takes
        over; the anomalies active at the newest of them are journalled, each from its
        start, as a console started then would have them."""
        self._catch_up = None
        caught_up: Analyser | None = catch_up.reading.result()
        if caught_up is None:  # the past could not be read: as a source without one
            caught_up = self._without_events(None)
            self._warm_from_lookback(caught_up, catch_up.behind[0][0].time if catch_up.behind
                                     else self.clock())
        for frame, status, rank_map in catch_up.behind:
            caught_up.analyse(frame, status, rank_map)
        caught_up.journal.log, caught_up.journal.active = self.event_log, {}
        self.analyser = caught_up

    def _aged(self, status: SourceStatus, taken: float) -> SourceStatus:
        """``status``, or, where the frame taken at ``taken`` is analysed later than a poll
        may run, how old its data is: never "ok" over data minutes old."""
        age = self.clock() - taken
        if status.health is not Health.OK or age <= late_after(self.refresh_seconds,
                                                               status.poll_seconds):
            return status
        return replace(status, health=Health.SLOW, since=taken,
                       message=f"data of {shown(taken)}, {ago(age)} old when analysed: "
                               "the analysis was late; the next poll is fresh")

    def _with_neighbours(self, analysis: Analysis) -> Analysis:
        """``analysis`` with who else is on the nodes it drains (asked of the source now
        and then: ``NeighbourCache``)."""
        return self.analyser.with_neighbours(self.neighbours.of(analysis.actions)) or analysis

    async def settle(self, analysis: Analysis, timeout: float) -> Analysis:
        """``analysis`` (the last poll's) with the verdict of the hang triage it asked for,
        waiting up to ``timeout`` seconds for the triage to finish; a failed poll's as it
        is. The console never waits: this is for one-shot users such as `ranktop report`."""
        catch_up = self._catch_up
        if catch_up is not None:  # a one-shot user wants the verdicts: wait for the past
            await asyncio.to_thread(catch_up.reading.result)
            self._take_over(catch_up)
        if self.error or self.analyser.last is None:
            return analysis
        if self.triage is not None:
            await asyncio.to_thread(self.triage.wait, timeout)
        settled = await asyncio.to_thread(self.analyser.with_newest_hang) or analysis
        if settled.actions:  # a caught-up analyser has not been told who else is on a node
            settled = await asyncio.to_thread(self._with_neighbours, settled)
        return settled

    def _look_back(self, now: float) -> None:
        """Once, before the first analysis: start reading what the source held before it
        (behind the polls), or start from its lookback where it keeps no past."""
        self._looked_back = True
        if self.source.keeps_past:
            self._begin_catch_up(now)
        else:
            self._warm_from_lookback(self.analyser, now)

    def _warm_from_lookback(self, analyser: Analyser, now: float) -> None:
        """``analyser`` started from the job's windowed values and the ranks seen, and
        goodput from the hour before ``now``."""
        detectors = analyser.detectors
        try:
            found = self.source.lookback(WINDOWED_JOB_VALUES, detectors.lookback_seconds,
                                         self.refresh_seconds)
        except Exception:  # without its past, a late start judges from its own polls
            return
        if found is not None:
            detectors.warm(found)
        seed_goodput(analyser, self.source, now)

    def _begin_catch_up(self, now: float) -> None:
        """Read the past up to the refresh step before ``now`` in a thread of its own, as a
        console watching since long before would have it. The past is not written to the
        event log: what is active when the caught-up analyser takes over is."""
        replay = Replay(self.settings, self.source, logs=self.logs)  # its files found once
        reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ranktop-catch-up")
        catch_up = CatchUp(Future(), replay.replay_seconds,
                           Analyser(self.settings, self.source.job_name, None, None),
                           deque(maxlen=BEHIND_MOST))

        def progress(done: int, total: int) -> None:
            if done < catch_up.done:
                catch_up.looks += 1
            catch_up.done, catch_up.total = done, total

        # To the newest step of the grid before now: a step earlier would leave up to two
        # refreshes unseen before the first poll, where a blip (an XID just before its rank
        # died) is lost to a late start.
        last = aligned(now, self.refresh_seconds)
        last -= self.refresh_seconds if last >= now else 0.0

        def read() -> Analyser | None:
            replay.progress = progress
            try:
                return replay.bring(self._without_events, last)
            except Exception:  # as a source without a past: from the lookback and its polls
                return None
            finally:
                replay.close()
                self.source.forget_past()  # the windows read: a late start's alone

        catch_up.reading = reader.submit(read)
        reader.shutdown(wait=False)
        self._catch_up = catch_up
        with contextlib.suppress(TimeoutError):  # read by then: the first screen has it all
            catch_up.reading.result(None if math.isinf(self.catch_up_wait)
                                    else self.catch_up_wait)

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


def catch_up_wait_seconds() -> float:
    """How long a first poll waits for the past: CATCH_UP_WAIT_SECONDS, or as the
    environment says."""
    try:
        return max(0.0, float(os.environ.get(CATCH_UP_WAIT_VARIABLE, CATCH_UP_WAIT_SECONDS)))
    except ValueError:
        return CATCH_UP_WAIT_SECONDS


def _reading(analysis: Analysis, catch_up: CatchUp) -> Analysis:
    """``analysis`` of a frame alone (its values and ranks, no verdict: a verdict needs the
    history), saying how far the reading of the past is."""
    percent = round(100 * catch_up.fraction)
    what = (f"reading the {ago(catch_up.seconds)} before the start" if catch_up.looks == 1
            else "reading further back, where an anomaly began")
    status = analysis.status
    if status.health is Health.OK:
        status = replace(status, message=f"{what} ({percent} %): verdicts once read")
    return replace(analysis, status=status, catching_up=catch_up.fraction)
