"""The application: wires the engine's snapshots to the screens. Polling runs in one worker,
paced by completion, so a slow source never overlaps itself or blocks a keypress. The app
tells a new analysis or rank map by the snapshot's version numbers (``tui/engine``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.filter import LineFilter
from textual.message import Message

from ...widgets.ascii_only import AsciiOnly
from ..core.analysis import Analysis
from ..core.events import EventLog
from ..engine.client import EngineClient, EngineSilent, EngineStopped
from ..engine.snapshot import Snapshot
from ..engine.threaded import ThreadEngine
from ..screens.cluster import ClusterScreen
from ..screens.commands import RanktopCommands
from ..screens.evidence import EvidenceScreen
from ..screens.help import HelpScreen
from ..screens.rank import RankScreen
from ..settings.config import Settings
from ..sources.base import Source
from .bundling import BUNDLE_BINDING, BundleMode
from .moments import MOMENT_BINDINGS, MomentMode
from .quit_signals import QUIT_SIGNALS, exit_status, terminal_gone


class AnalysisReady(Message):
    """A poll was analysed (or failed); a newer one waiting in the queue replaces it."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AnalysisReady)


# A quit that takes longer is stuck writing to a terminal that has gone: skip the goodbye.
QUIT_GRACE_SECONDS = 10.0
# Once the terminal is given back, all that can be left is a worker thread finishing a poll
# or an analysis nobody will see (seconds at 100,000 ranks): the process ends this long after.
EXIT_GRACE_SECONDS = 1.0


class RanktopApp(MomentMode, BundleMode, App[None]):
    CSS_PATH = "ranktop.tcss"
    TITLE = "ranktop"
    COMMANDS = App.COMMANDS | {RanktopCommands}
    BINDING_GROUP_TITLE = "Everywhere"
    BINDINGS = [
        Binding("question_mark", "help", "Help", key_display="?", id="app.help",
                tooltip="Show every key"),
        # Priority: ctrl+c quits from every screen and text field, as in htop, k9s and less.
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True, id="app.quit",
                tooltip="Quit ranktop, from any screen"),
        *MOMENT_BINDINGS,
        BUNDLE_BINDING,
    ]

    def __init__(self, settings: Settings, source: Source | None = None,
                 clock: Callable[[], float] = time.time, poll: bool = True,
                 event_log: EventLog | None = None, ascii_only: bool = False,
                 engine: EngineClient | None = None, at: float | None = None,
                 bundle: float | None = None) -> None:
        """``engine``: one already started (in its own process); else one in this process
        for ``source``. ``at``: a past moment to open at (epoch seconds). ``bundle``: the
        engine is a bundle's, of this moment, which stands for live."""
        super().__init__()
        self.ascii_filters = [AsciiOnly()] if ascii_only else []
        """Set when the terminal's locale is not UTF-8 (tui/cli/charset.py)."""
        self.settings = settings
        self.clock = clock
        self.polling = poll
        if engine is None:
            assert source is not None, "an app needs a source or an engine"
            engine = ThreadEngine(settings, source, event_log, clock)
        self.engine = engine
        self.live = self.engine.latest
        """The newest live poll's snapshot (a bundle's own, reopened)."""
        self.cluster = ClusterScreen(settings, self.live, self.engine.job_name)
        self.opens_at = at
        self.home = self.moment = bundle
        self.cleanups: list[Callable[[], None]] = []
        self.ends_process = False  # set by the CLI: the process ends soon after the app
        """What must be undone even when the app cannot quit cleanly (temporary folders)."""

    def get_line_filters(self) -> Sequence[LineFilter]:
        return [*super().get_line_filters(), *self.ascii_filters]

    def get_key_display(self, binding: Binding) -> str:
        """Textual's display of a key; in ASCII its name where that is a symbol ("enter")."""
        display = super().get_key_display(binding)
        if self.ascii_filters and not display.isascii():
            modifiers, key = binding.parse_key()
            return "+".join([*modifiers, key])
        return display

    def on_load(self) -> None:
        # Before the terminal is taken over: a signal from here on is a clean quit.
        loop = asyncio.get_running_loop()
        for signum in QUIT_SIGNALS:
            try:
                loop.add_signal_handler(signum, self.quit_on_signal, signum)
            except (NotImplementedError, RuntimeError, ValueError):
                return  # not the main thread, or a loop without signals: Python's defaults

    def quit_on_signal(self, signum: int) -> None:
        """Quit cleanly; the exit status says which signal, as a shell would (128 + it).

        A terminal that has hung up takes no more writes, and Textual's writer would wait on
        it for ever: then the cleanups run and the process ends at once."""
        code = exit_status(signum)
        if self._exit or terminal_gone():
            self.force_exit(code)
        self.exit(return_code=code)
        watchdog = threading.Timer(QUIT_GRACE_SECONDS, self.force_exit, (code,))
        watchdog.daemon = True
        watchdog.start()

    async def run_async(self, **kwargs: Any) -> Any:
        """Run the console; once it has given the terminal back, a console that owns its
        process (``ends_process``: the CLI's) ends it within ``EXIT_GRACE_SECONDS``,
        whatever its threads are doing (a crash is said first)."""
        result = await super().run_async(**kwargs)
        if self.ends_process and self.crash is None:
            ending = threading.Timer(EXIT_GRACE_SECONDS, self.force_exit,
                                     (self.return_code or 0,))
            ending.daemon = True
            ending.start()
        return result  # what the app returns (a screenshot, for the snapshot tests)

    def force_exit(self, code: int) -> None:
        """Run the cleanups and end the process without waiting for the terminal."""
        for cleanup in self.cleanups:
            with contextlib.suppress(Exception):  # the others must run all the same
                cleanup()
        os._exit(code)

    def on_mount(self) -> None:
        self.set_keymap(dict(self.settings.keymap))
        self.push_screen(self.cluster)
        if self.home is not None:  # a bundle: its moment, once the maps are laid out
            self.call_after_refresh(self.show_bundle)
        if self.polling:
            self.poll_forever()
        if self.opens_at is not None:
            self.go_to_moment(self.opens_at)

    @work(exclusive=True, group="poll", exit_on_error=False, description="poll the source")
    async def poll_forever(self) -> None:
        while True:
            started = time.monotonic()
            asked = await self.poll_once()
            elapsed = time.monotonic() - started
            # A struggling server's Retry-After is honoured: it is never hammered.
            await asyncio.sleep(max(0.05, self.settings.refresh_seconds - elapsed, asked))

    async def poll_once(self) -> float:
        """Have the engine poll, analyse and plan the maps off the UI's path (one request);
        post the snapshot. Returns the seconds the source asked to be left alone."""
        self.cluster.polling_since = self.clock()
        try:
            snapshot = await self.engine.poll(self.cluster.map_geometry())
        except (EngineStopped, EngineSilent) as stopped:  # gone, or silent past its deadline
            await self.restart_engine(stopped)
            return 0.0
        finally:
            self.cluster.polling_since = None
        self.post_message(AnalysisReady(snapshot))
        return snapshot.retry_after

    async def restart_engine(self, stopped: EngineStopped | EngineSilent) -> None:
        """Say that the engine stopped, and start another; the screen keeps what it shows."""
        self.notify(f"{stopped}: restarting it; the screen shows its last poll meanwhile",
                    title="engine restarted", severity="warning", timeout=10, markup=False)
        try:
            await asyncio.to_thread(self.engine.restart)
        except Exception as error:  # the next poll tries again
            self.notify(f"the engine could not restart: {error}", severity="error",
                        timeout=10, markup=False)

    @property
    def analysis(self) -> Analysis:
        """The newest live poll's analysis."""
        return self.live.analysis

    async def on_analysis_ready(self, message: AnalysisReady) -> None:
        was, self.live = self.live, message.snapshot
        self.follow_job_end(self.live.ended)
        if self.moment is not None:  # it stays on screen, the live job waits for the way back
            self.show_moment_badges()  # how long ago the moment was, as of this poll
            return
        ranks, had = self.live.analysis.rank_map, was.analysis.rank_map
        if (self.live.rank_map_version != was.rank_map_version and had.ranks
                and ranks.source != had.source):
            self.notify(f"ranks now from {ranks.source} (were: {had.source})", timeout=8,
                        markup=False)
        await self.show(self.live)

    async def show(self, snapshot: Snapshot, asked: bool = False) -> None:
        """The one way to the screens: ``snapshot`` (a live poll, a past moment or a bundle,
        as its ``at`` says) on the cluster screen, and on the screen on top, which asks for
        what it lacks itself. ``asked``: the user asked for it (drawn even while paused)."""
        if snapshot.rank_map_version != self.cluster.rank_map_version:
            await self.cluster.use_rank_map(snapshot.analysis.rank_map,
                                            snapshot.rank_map_version)
        self.cluster.show(snapshot, asked)
        screen = self.screen
        if isinstance(screen, RankScreen):
            screen.show_analysis(snapshot.analysis, snapshot.at)
        elif isinstance(screen, EvidenceScreen):
            screen.show_analysis(snapshot.analysis)
        self.show_moment_badges()

    @work(group="bundle-open", exit_on_error=False, description="show the bundle")
    async def show_bundle(self) -> None:
        """The bundle's moment, its maps' levels planned by its engine as a poll's are."""
        self.live = await self.engine.poll(self.cluster.map_geometry())
        await self.show(self.live, asked=True)

    @property
    def crash(self) -> BaseException | None:
        """The exception that ended the app, if one did."""
        return self._exception

    def _fatal_error(self) -> None:
        # Textual would print a traceback with local variables (the settings, secrets among
        # them) once the terminal is restored; the CLI says one line instead (cli/crash.py).
        self.bell()
        self._close_messages_no_wait()

    def open_rank(self, rank: int) -> None:
        """The rank screen of ``rank``, drawn at once from the latest analysis."""
        if not len(self.cluster.rank_map):
            return
        screen = RankScreen(self.settings, self.cluster.rank_map, rank, self.engine)
        screen.analysis = self.analysis if self.moment is None else self.cluster.analysis
        screen.moment, screen.replaying = self.moment, self.wanted
        self.push_screen(screen)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

