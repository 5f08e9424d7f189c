"""`ranktop` against a backend that holds several jobs, none named: the jobs list, each
job's console one Enter away (tui/app/fleet.py); and the demo's fleet, its job's console
over the list."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..engine.client import EngineClient
from ..settings.config import Settings
from ..sources.prometheus.client import QueryError
from ..sources.prometheus.fleet import FleetReader

if TYPE_CHECKING:
    from ..app.fleet import FleetApp
    from ..core.events import EventLog
    from ..sources.base import Source
    from ..sources.demo_fleet import DemoFleet


def holds_several_jobs(settings: Settings) -> bool:
    """Whether the backend holds more than one job (one cheap label-values call); False
    when it cannot say (the console then opens every series as one job, as before)."""
    try:
        reader = FleetReader(settings)
    except ValueError:  # a name PromQL cannot hold: the console says so itself
        return False
    try:
        return len(reader.job_ids()) > 1
    except QueryError:
        return False
    finally:
        reader.close()


def run_fleet(settings: Settings, open_engine: Callable[[Settings], EngineClient | None],
              run_app: Callable[..., int], mouse: bool, ascii_only: bool,
              thread_engine: Callable[[Settings], EngineClient]) -> int:
    """The jobs list's console; ``open_engine`` starts a job's engine when it is opened."""
    from ..app.fleet import FleetApp
    from ..engine.fleet import FleetEngine

    fleet = FleetEngine(settings)
    idle = thread_engine(settings)  # stands in while no job is open; never polled
    app = FleetApp(settings, fleet, open_engine, idle, ascii_only=ascii_only)
    app.cleanups.append(idle.close)
    try:
        return run_app(app, mouse)
    finally:
        fleet.close()
        _close_engines(app, idle)


def _close_engines(app: FleetApp, idle: EngineClient | None) -> None:
    """The idle engine, and the engine of the job still open."""
    if idle is not None:
        idle.close()
    if app.job_open is not None and app.engine is not None:
        app.engine.close()


def run_demo_fleet(settings: Settings, make_demo_source: Callable[[int], Source],
                   event_log: EventLog, started: float, run_app: Callable[..., int],
                   mouse: bool, ascii_only: bool, cleanups: list[Callable[[], None]]) -> int:
    """The demo as a fleet: its job's console first, over the jobs list (Esc or q), which
    holds the small jobs of config/fleet.toml beside it. ``make_demo_source(n)`` makes the
    demo job's source for its n-th opening (its logs in a folder of their own);
    ``cleanups``: what must be undone even when the app cannot quit cleanly."""
    from ..sources.demo_fleet import DemoFleet

    app = demo_fleet_app(settings, DemoFleet(settings.demo, started), make_demo_source,
                         event_log, ascii_only=ascii_only)
    app.cleanups += cleanups
    try:
        return run_app(app, mouse)
    finally:
        _close_engines(app, app.idle_engine)


def demo_fleet_app(settings: Settings, demo: DemoFleet,
                   make_demo_source: Callable[[int], Source],
                   event_log: EventLog | None = None, clock: Callable[[], float] = time.time,
                   opens: bool = True, **options) -> FleetApp:
    """The demo's fleet console; ``opens``: with the demo job's console open over the list
    (as ``ranktop --demo`` opens), else the list alone (as ``ranktop`` with no job)."""
    from ..app.fleet import FleetApp
    from ..engine.fleet import FleetEngine
    from ..engine.threaded import ThreadEngine

    openings = itertools.count()

    def open_engine(job: Settings) -> EngineClient | None:
        name = job.prometheus.job
        source = make_demo_source(next(openings)) if name == demo.demo_job \
            else demo.source(name)
        return None if source is None else ThreadEngine(job, source, event_log, clock)

    idle = ThreadEngine(settings, demo.idle_source(), clock=clock)
    fleet = FleetEngine(settings, demo, clock, source_name=demo.source_name)
    app = FleetApp(settings, fleet, open_engine, idle, opens=demo.demo_job if opens else None,
                   clock=clock, **options)
    app.cleanups.append(idle.close)
    return app
