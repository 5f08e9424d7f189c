"""The embedded demo cluster as a source: the simulator, read at the current time."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from ..core.advice.tenants import NodeTenants
from ..core.detect.lookback import SEEN_SECONDS, SEEN_STEP, Lookback
from ..core.history import Point
from ..core.metrics import present_median
from ..core.model import Frame, Health, RankMap, SourceStatus, is_missing
from ..settings.config import DemoSettings
from ..simulator.cluster import GPU_MODEL, SimCluster
from ..simulator.flight_writer import FLIGHT_FOLDER, FlightWriter
from ..simulator.log_writer import LogWriter
from ..simulator.scenario import load_scenario
from ..simulator.tenants import place, tenants_on
from .base import Source

CLOSE_WAIT_SECONDS = 0.5  # for a write in progress to finish, then to stop at its next file
LOG_WAIT_SECONDS = 0.5  # the longest a poll waits for its lines to be written


class DemoSource(Source):
    """Frames of a simulated cluster. ``clock`` gives wall-clock seconds and ``started`` the
    moment the scenario began (both fixed in tests and screenshots)."""

    name = "demo (simulated)"
    keeps_past = True  # the simulated job is the same whenever it is asked

    def __init__(self, cluster: SimCluster, clock: Callable[[], float] = time.time,
                 started: float | None = None, log_writer: LogWriter | None = None,
                 wait_for_logs: bool | None = None) -> None:
        self.cluster = cluster
        self.log_writer = log_writer
        self.log_spec = log_writer.layout_spec if log_writer is not None else ""
        self.flight_spec = log_writer.flight_spec if log_writer is not None else ""
        self._log_lock = threading.Lock()
        self._log_due = 0.0
        self._closed = False
        self._logs_started = False
        self.clock = clock
        # On a clock of its own (tests, screenshots) the demo is deterministic unless told
        # otherwise: every poll waits for its logs, however long a busy machine takes.
        self._wait_for_logs = clock is not time.time if wait_for_logs is None else wait_for_logs
        self.started = clock() if started is None else started
        self.job_name = cluster.job_name
        self.rank_map = cluster.rank_map
        self._tenants = place(cluster.scenario.tenants, cluster.rank_map, cluster.seed)
        self._status = SourceStatus(self.name, Health.OK, since=self.started)

    async def poll(self) -> Frame:
        now = self.clock()
        frame = await asyncio.to_thread(self._read, now - self.started)
        self._status = SourceStatus(self.name, Health.OK, since=self._status.since, last_ok=now)
        return replace(frame, time=now)

    def _read(self, t: float) -> Frame:
        self._write_logs(t)
        return self.cluster.frame_at(t)

    def _write_logs(self, t: float) -> None:
        """Write the logs up to ``t`` in a thread beside the poll. The first write creates a
        file per rank (at 100,000 ranks, 300,000 files) and the poll does not wait for it;
        later polls add a few lines and wait for them, before anything reads the logs, but
        never longer than ``LOG_WAIT_SECONDS`` (a large job's hang writes a dump per rank).
        A poll that finds the last write still going leaves its lines to the next."""
        self._log_due = t
        writer = self.log_writer
        if writer is None or self._closed:
            return
        if not self._log_lock.acquire(blocking=False):
            return
        first, self._logs_started = not self._logs_started, True
        writing = threading.Thread(target=self._write_beside, args=(writer, t),
                                   name="ranktop-demo-logs", daemon=True)
        writing.start()
        if self._wait_for_logs:
            writing.join()
        elif not first:
            writing.join(LOG_WAIT_SECONDS)

    def _write_beside(self, writer: LogWriter, t: float) -> None:
        try:
            self._advance_logs(writer, t)
        finally:
            self._log_lock.release()

    def _advance_logs(self, writer: LogWriter, t: float) -> None:
        try:
            writer.advance(t)
        except OSError:
            self._closed = True  # a full or vanished folder ends the demo's logs, not the demo

    def close(self) -> None:
        """Start no other log write; let one in progress finish if it is small, else end it
        at its next file, so the folder can go: quitting never waits long for the logs of a
        large job (at 100,000 ranks the first write creates 300,000 files and a hang's dumps
        100,000 more)."""
        self._closed = True
        if self._log_lock.acquire(timeout=CLOSE_WAIT_SECONDS):  # a few lines: written
            self._log_lock.release()
            return
        if self.log_writer is not None:
            self.log_writer.stop()
        if self._log_lock.acquire(timeout=CLOSE_WAIT_SECONDS):  # one file's write at most
            self._log_lock.release()

    def flush_logs(self) -> None:
        """Wait until the logs are written up to the latest poll (after the first poll, whose
        write runs beside it; tests and screenshots)."""
        writer = self.log_writer
        if writer is not None and not self._closed:
            with self._log_lock:
                self._advance_logs(writer, self._log_due)

    def status(self) -> SourceStatus:
        return self._status

    def gpu_model(self, rank: int) -> str:
        return GPU_MODEL

    def tenants(self, nodes: Sequence[str]) -> dict[str, NodeTenants]:
        """Who else is on ``nodes``: the scenario's other jobs, as the exporter serves them."""
        return tenants_on(self._tenants, self.rank_map, nodes)

    def backfill(self, rank: int, metrics: Sequence[str], seconds: float, step: float
                 ) -> dict[str, list[Point]]:
        """A rank's values and the job's median over the last ``seconds``, recomputed."""
        now = self.clock() - self.started
        frames = [self.cluster.frame_at(t) for t in _times(now, seconds, step)]
        found: dict[str, list[Point]] = {}
        for metric in metrics:
            found[metric] = [
                Point(self.started + frame.time, frame.value(metric, rank),
                      present_median(frame.values.get(metric, ())))
                for frame in frames
            ]
        return found


    def frames_at(self, times: Sequence[float]) -> Iterator[tuple[Frame, RankMap]]:
        """The simulated job at each of ``times``, recomputed (none before the scenario)."""
        for moment in times:
            if moment >= self.started:
                frame = self.cluster.frame_at(moment - self.started)
                yield replace(frame, time=moment), self.rank_map

    def lookback(self, job_values: Sequence[str], seconds: float, step: float,
                 until: float | None = None) -> Lookback:
        """The job's values every ``step`` over the ``seconds`` before ``until`` (None:
        now), and when each rank last reported in the ``SEEN_SECONDS`` before it,
        recomputed (none before the scenario)."""
        now = (self.clock() if until is None else until) - self.started
        job: dict[str, list[tuple[float, float]]] = {name: [] for name in job_values}
        for t in _times(now, seconds, step):
            values = self.cluster.frame_at(t).job
            for name in job_values:
                if not is_missing(value := values.get(name, float("nan"))):
                    job[name].append((self.started + t, value))
        last_seen: dict[int, float] = {}
        n = len(self.rank_map)
        for t in _times(now, SEEN_SECONDS, SEEN_STEP):
            up = self.cluster.frame_at(t).ranks_up(n)
            last_seen.update((rank, self.started + t) for rank in range(n) if up[rank])
        return Lookback(job, last_seen, SEEN_STEP)

    def job_past(self, job_values: Sequence[str], seconds: float, step: float, until: float
                 ) -> dict[str, list[tuple[float, float]]]:
        """The job's values every ``step`` over the ``seconds`` before ``until``; the step
        counter alone without working out whole frames (an hour of them, for goodput)."""
        job: dict[str, list[tuple[float, float]]] = {name: [] for name in job_values}
        for t in _times(until - self.started, seconds, step):
            values = ({"step": float(self.cluster.step_at(t))} if set(job_values) <= {"step"}
                      else self.cluster.frame_at(t).job)
            for name in job_values:
                if not is_missing(value := values.get(name, float("nan"))):
                    job[name].append((self.started + t, value))
        return job


def _times(now: float, seconds: float, step: float) -> list[float]:
    """Moments ``step`` apart over the ``seconds`` before ``now`` (never before 0)."""
    count = int(seconds / step)
    return [t for t in (now - (count - i) * step for i in range(count)) if t >= 0]


def demo_source(demo: DemoSettings, clock: Callable[[], float] = time.time,
                started: float | None = None, log_root: Path | None = None) -> DemoSource:
    """The demo cluster the settings describe, running the shipped scenario; with
    ``log_root``, its ranks write torchrun-style log files there as the scenario unfolds.

    Raises ScenarioError when the scenario file is broken.
    """
    cluster = SimCluster(demo.nodes, demo.gpus_per_node, demo.seed, load_scenario())
    began = clock() if started is None else started
    writer = None
    if log_root is not None:  # the logs' timestamps follow the demo's own clock
        dumps = FlightWriter(cluster, log_root / FLIGHT_FOLDER, demo.seed, epoch=began)
        writer = LogWriter(cluster, log_root, seed=demo.seed, epoch=began, flight=dumps)
    return DemoSource(cluster, clock, began, writer)
