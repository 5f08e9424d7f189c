"""`ranktop` against a backend that holds several jobs, none named: the jobs list, each
job's console one Enter away (tui/app/fleet.py)."""

from __future__ import annotations

from collections.abc import Callable

from ..engine.client import EngineClient
from ..settings.config import Settings
from ..sources.prometheus.client import QueryError
from ..sources.prometheus.fleet import FleetReader


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
        idle.close()
        if app.job_open is not None:
            app.engine.close()
