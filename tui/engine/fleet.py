"""The fleet's side of the engine room: the jobs list's refreshes, off the UI's path.

The list reads the backend in a thread (a few aggregated queries: it does no analysis of
ranks) and hands the screens one frozen value per refresh, the jobs judged and ranked worst
first. It refreshes at its own slower cadence (``fleet_refresh_seconds``) and goes on while
a job's console is open, so the list is current when the engineer comes back to it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from ..core.fleet import Limits, ranked
from ..settings.config import Settings
from ..sources.prometheus.client import QueryError, shown_url
from ..sources.prometheus.fleet import FleetRead, FleetReader
from .fleet_snapshot import FleetSnapshot

LEAST_REFRESH_SECONDS = 10.0
REFRESHES_PER_LIST = 5  # the list refreshes once per this many of a console's refreshes


def fleet_refresh_seconds(settings: Settings) -> float:
    """The list's cadence: slower than a job's console, never faster than every 10 s."""
    return max(LEAST_REFRESH_SECONDS, REFRESHES_PER_LIST * settings.refresh_seconds)


def job_settings(settings: Settings, job: str) -> Settings:
    """``settings`` for one job of the list: its console's."""
    return replace(settings, prometheus=replace(settings.prometheus, job=job))


class JobsReader(Protocol):
    """What reads the list: Prometheus's ``FleetReader``, or the demo's fleet."""

    limits: Limits

    def read(self) -> FleetRead: ...

    def close(self) -> None: ...


class FleetEngine:
    """The list's reader and its latest snapshot."""

    def __init__(self, settings: Settings, reader: JobsReader | None = None,
                 clock: Callable[[], float] = time.time, source_name: str = "") -> None:
        self.settings = settings
        self.reader = reader or FleetReader(settings, clock=clock)
        self.clock = clock
        self.source_name = source_name or f"Prometheus {shown_url(settings.prometheus.url)}"
        self.latest = FleetSnapshot(0)

    async def refresh(self) -> FleetSnapshot:
        """Read the list again (in a thread); a failed read keeps the last rows, says why."""
        version = self.latest.version + 1
        try:
            read = await asyncio.to_thread(self.reader.read)
        except QueryError as error:
            self.latest = replace(self.latest, version=version, error=str(error))
            return self.latest
        rows = ranked(read.jobs, read.time, self.reader.limits)
        self.latest = FleetSnapshot(version, tuple(rows), read.time, read.recorded, "",
                                    dict(read.errors))
        return self.latest

    def close(self) -> None:
        self.reader.close()
