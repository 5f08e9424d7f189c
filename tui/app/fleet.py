"""The console of a fleet: the jobs list first, one job's console at a time on top of it.

``FleetMode`` is mixed into the app: it keeps the list refreshing at its own cadence (the
engine room's ``FleetEngine``), opens a job's console on Enter (a new engine for that job,
made by ``open_engine``, and its cluster screen), and on Esc or q closes it and comes back to
the list, which kept refreshing meanwhile. ``FleetApp`` is the app so made.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence

from textual import events, work
from textual.message import Message

from ..engine.client import EngineClient
from ..engine.fleet import FleetEngine, fleet_refresh_seconds, job_settings
from ..engine.fleet_snapshot import FleetSnapshot
from ..screens.advice import OtherJob
from ..screens.jobs import JobCommands, JobConsoleScreen, JobsScreen
from ..settings.config import Settings
from .console import RanktopApp

LIST_ACTIONS = frozenset({"quit", "help", "command_palette", "back_to_jobs"})
OpenEngine = Callable[[Settings], EngineClient | None]  # None: it said why it could not


class FleetReady(Message):
    """The list was read again; a newer one waiting replaces it."""

    def __init__(self, snapshot: FleetSnapshot) -> None:
        super().__init__()
        self.snapshot = snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FleetReady)


class FleetMode:
    """Mixed into the app: the jobs list, and the way into a job's console and back."""

    fleet: FleetEngine
    open_engine: OpenEngine
    jobs: JobsScreen
    fleet_settings: Settings
    idle_engine: EngineClient | None = None  # the app's engine while no job is open
    job_open: str | None = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """With no job open, the keys of a job's moments and bundles are not shown."""
        if self.job_open is None and action not in LIST_ACTIONS:
            return False
        return super().check_action(action, parameters)

    def start_fleet(self) -> None:
        self.push_screen(self.jobs)
        self.refresh_fleet_forever()

    @work(exclusive=True, group="fleet", exit_on_error=False, description="read the jobs")
    async def refresh_fleet_forever(self) -> None:
        pause = fleet_refresh_seconds(self.fleet_settings)
        while True:
            started = time.monotonic()
            self.post_message(FleetReady(await self.fleet.refresh()))
            await asyncio.sleep(max(0.05, pause - (time.monotonic() - started)))

    def on_fleet_ready(self, message: FleetReady) -> None:
        self.jobs.show_snapshot(message.snapshot)
        unhealthy = message.snapshot.unhealthy
        self.sub_title = f"{unhealthy} unhealthy job{'s' * (unhealthy != 1)}"

    @work(exclusive=True, group="open-job", exit_on_error=False, description="open a job")
    async def open_job(self, name: str, quiet: bool = False) -> None:
        """The job's console: its engine started (in a thread: a process takes a moment),
        then its cluster screen, polled as the console polls; ``quiet``: without saying
        that it is opening (the demo's first screen)."""
        if self.job_open is not None:
            return
        settings = job_settings(self.fleet_settings, name)
        if not quiet:
            self.notify(f"opening {name}…", timeout=3, markup=False)
        engine = await asyncio.to_thread(self.open_engine, settings)
        if engine is None:
            self.notify(f"the console of {name} could not start", severity="error",
                        markup=False)
            return
        self.job_open = name
        self.settings, self.engine = settings, engine
        self.live = engine.latest
        self.moment = self.wanted = None
        self.cluster = JobConsoleScreen(settings, self.live, engine.job_name)
        await self.push_screen(self.cluster)
        self.poll_forever()

    async def action_back_to_jobs(self) -> None:
        """Close the job's console and its engine; the list is on screen again."""
        if self.job_open is None:
            return
        self.workers.cancel_group(self, "poll")
        while self.screen is not self.jobs and len(self.screen_stack) > 1:
            await self.pop_screen()
        engine, self.engine = self.engine, self.idle_engine
        self.settings, self.job_open = self.fleet_settings, None
        with contextlib.suppress(Exception):  # a dead engine has nothing left to let go of
            await asyncio.to_thread(engine.close)

    async def show_job_row(self, names: Sequence[str]) -> bool:
        """Back to the list with the row of the first of ``names`` it holds selected (the
        advice's other job on a node); False when the list holds none of them."""
        if not any(self.jobs.has_job(name) for name in names):
            return False
        await self.action_back_to_jobs()
        self.jobs.select_job(names)
        return True


class FleetApp(FleetMode, RanktopApp):
    """The jobs list, and each job's console from it."""

    COMMANDS = RanktopApp.COMMANDS | {JobCommands}

    def __init__(self, settings: Settings, fleet: FleetEngine, open_engine: OpenEngine,
                 idle_engine: EngineClient, opens: str | None = None, **options) -> None:
        """``opens``: the job whose console opens first, over the list (the demo's)."""
        super().__init__(settings, engine=idle_engine, poll=False, **options)
        self.fleet_settings, self.opens = settings, opens
        self.fleet, self.open_engine, self.idle_engine = fleet, open_engine, idle_engine
        self.jobs = JobsScreen(fleet.source_name)
        self.cleanups.append(fleet.close)

    # Textual runs the handler of every class in the MRO: prevent_default stops the console's.
    def on_mount(self, event: events.Mount) -> None:
        event.prevent_default()  # the list first, not the cluster screen
        self.set_keymap(dict(self.settings.keymap))
        self.start_fleet()
        if self.opens is not None:
            self.open_job(self.opens, quiet=True)

    async def on_other_job(self, message: OtherJob) -> None:
        """The advice's other job on a node: its row in the list."""
        if not await self.show_job_row(message.names):
            self.notify(f"{message.names[0]} is not in the jobs list", timeout=4,
                        markup=False)

    def on_analysis_ready(self, message: Message) -> None:
        if self.job_open is None:  # a poll of a console closed meanwhile is dropped
            message.prevent_default()
