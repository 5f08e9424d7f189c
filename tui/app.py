"""The application: wires a source's frames to the screens. Polling runs in one worker,
paced by completion, so a slow source never overlaps itself or blocks a keypress."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ranktop.tui.core.analysis import Analysis
from ranktop.tui.core.events import EventLog
from ranktop.tui.pipeline import Pipeline
from ranktop.tui.quit_signals import QUIT_SIGNALS, exit_status, terminal_gone
from ranktop.tui.rank_context import RankContext
from ranktop.tui.screens.cluster import ClusterScreen
from ranktop.tui.screens.commands import RanktopCommands
from ranktop.tui.screens.help import HelpScreen
from ranktop.tui.screens.rank import RankScreen
from ranktop.tui.settings.config import Settings
from ranktop.tui.sources.base import Source
from ranktop.widgets.ascii_only import AsciiOnly
from ranktop.widgets.map_levels import MapLevels
from textual import work
from textual.app import App
from textual.binding import Binding
from textual.filter import LineFilter
from textual.message import Message


class AnalysisReady(Message):
    """A poll was analysed (or failed); a newer one waiting in the queue replaces it."""

    def __init__(self, analysis: Analysis, planned: dict[str, MapLevels] | None = None) -> None:
        super().__init__()
        self.analysis = analysis
        self.planned = planned  # the cluster maps' levels, worked out off the UI thread

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AnalysisReady)


# A quit that takes longer is stuck writing to a terminal that has gone: skip the goodbye.
QUIT_GRACE_SECONDS = 10.0
# Once the terminal is given back, all that can be left is a worker thread finishing a poll
# or an analysis nobody will see (seconds at 100,000 ranks): the process ends this long after.
EXIT_GRACE_SECONDS = 1.0


class RanktopApp(App[None]):
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
    ]

    def __init__(self, settings: Settings, source: Source,
                 clock: Callable[[], float] = time.time, poll: bool = True,
                 event_log: EventLog | None = None, ascii_only: bool = False) -> None:
        super().__init__()
        self.ascii_filters = [AsciiOnly()] if ascii_only else []
        """Set when the terminal's locale is not UTF-8 (tui/cli/charset.py)."""
        self.settings = settings
        self.source = source
        self.clock = clock
        self.polling = poll
        self.cluster = ClusterScreen(settings, source.rank_map, source.job_name, source.status())
        self.pipeline = Pipeline(settings, source, event_log, clock)
        self.context = RankContext(settings, source.job_name, event_log, self.pipeline.logs,
                                   settings.alertmanager_url, source)
        self.analysis = self.pipeline.latest
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
        if self.polling:
            self.poll_forever()

    @work(exclusive=True, group="poll", exit_on_error=False, description="poll the source")
    async def poll_forever(self) -> None:
        while True:
            started = time.monotonic()
            await self.poll_once()
            elapsed = time.monotonic() - started
            # A struggling server's Retry-After is honoured: it is never hammered.
            asked = getattr(self.source, "retry_after", None) or 0.0
            await asyncio.sleep(max(0.05, self.settings.refresh_seconds - elapsed, asked))

    async def poll_once(self) -> None:
        """Fetch one frame, analyse it and plan the maps off the UI's path, and post it."""
        analysis = await self.pipeline.poll()
        planned = await asyncio.to_thread(self._plan_maps, analysis)
        self.post_message(AnalysisReady(analysis, planned))

    def _plan_maps(self, analysis: Analysis) -> dict[str, MapLevels] | None:
        try:
            return self.cluster.plan_maps(analysis)
        except Exception:  # the screen then plans them itself: a poll must never stop here
            return None

    async def on_analysis_ready(self, message: AnalysisReady) -> None:
        analysis = message.analysis
        self.analysis = analysis
        if analysis.rank_map is not self.cluster.rank_map:
            was, had = self.cluster.rank_map.source, bool(self.cluster.rank_map.ranks)
            await self.cluster.use_rank_map(analysis.rank_map)
            if had and was != analysis.rank_map.source:
                self.notify(f"ranks now from {analysis.rank_map.source} (were: {was})",
                            timeout=8, markup=False)
        self.cluster.show_analysis(analysis, message.planned)
        if isinstance(self.screen, RankScreen):
            self.screen.show_analysis(analysis)

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
        screen = RankScreen(self.settings, self.cluster.rank_map, rank, self.context)
        self.push_screen(screen)
        screen.analysis = self.analysis

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

