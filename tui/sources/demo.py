"""The embedded demo cluster as a source: the simulator, read at the current time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace

from tui.model import Frame, Health, SourceStatus
from tui.scenario import load_scenario
from tui.settings import DemoSettings
from tui.simulate import SimCluster


class DemoSource:
    """Frames of a simulated cluster. ``clock`` gives wall-clock seconds and ``started`` the
    moment the scenario began (both fixed in tests and screenshots)."""

    name = "demo (simulated)"

    def __init__(self, cluster: SimCluster, clock: Callable[[], float] = time.time,
                 started: float | None = None) -> None:
        self.cluster = cluster
        self.clock = clock
        self.started = clock() if started is None else started
        self.job_name = cluster.job_name
        self.rank_map = cluster.rank_map
        self._status = SourceStatus(self.name, Health.OK, since=self.started)

    async def poll(self) -> Frame:
        now = self.clock()
        frame = await asyncio.to_thread(self.cluster.frame_at, now - self.started)
        self._status = SourceStatus(self.name, Health.OK, since=self._status.since, last_ok=now)
        return replace(frame, time=now)

    def status(self) -> SourceStatus:
        return self._status


def demo_source(demo: DemoSettings, clock: Callable[[], float] = time.time,
                started: float | None = None) -> DemoSource:
    """The demo cluster the settings describe, running the shipped scenario.

    Raises ScenarioError when the scenario file is broken.
    """
    cluster = SimCluster(demo.nodes, demo.gpus_per_node, demo.seed, load_scenario())
    return DemoSource(cluster, clock, started)
