"""The application: wires a source's frames to the screens. Polling runs in one worker,
paced by completion, so a slow source never overlaps itself or blocks a keypress."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from ranktop.tui.core.analysis import Watch
from ranktop.tui.core.detect import Anomaly
from ranktop.tui.core.events import EventLog
from ranktop.tui.core.model import Frame, SourceStatus
from ranktop.tui.rank_context import RankContext
from ranktop.tui.screens.cluster import ClusterScreen
from ranktop.tui.screens.commands import RanktopCommands
from ranktop.tui.screens.help import HelpScreen
from ranktop.tui.screens.rank import RankScreen
from ranktop.tui.settings.config import Settings
from ranktop.tui.sources.base import Source
from textual import work
from textual.app import App
from textual.binding import Binding
from textual.message import Message


class FrameReady(Message):
    """A poll finished; a newer one waiting in the queue replaces an older one."""

    def __init__(self, frame: Frame, status: SourceStatus,
                 anomalies: Sequence[Anomaly] = (), ranks_up: int | None = None) -> None:
        super().__init__()
        self.frame = frame
        self.status = status
        self.anomalies = anomalies
        self.ranks_up = ranks_up

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, FrameReady)


class PollFailed(Message):
    def __init__(self, status: SourceStatus) -> None:
        super().__init__()
        self.status = status


class RanktopApp(App[None]):
    CSS_PATH = "ranktop.tcss"
    TITLE = "ranktop"
    COMMANDS = App.COMMANDS | {RanktopCommands}
    BINDING_GROUP_TITLE = "Everywhere"
    BINDINGS = [
        Binding("question_mark", "help", "Help", key_display="?", id="app.help",
                tooltip="Show every key"),
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit ranktop"),
    ]

    def __init__(self, settings: Settings, source: Source,
                 clock: Callable[[], float] = time.time, poll: bool = True,
                 event_log: EventLog | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.source = source
        self.clock = clock
        self.polling = poll
        self.cluster = ClusterScreen(settings, source.rank_map, source.job_name, source.status())
        log_spec = settings.log_spec or getattr(source, "log_spec", "")
        self.context = RankContext(settings, source.job_name, event_log, log_spec,
                                   settings.alertmanager_url, source)
        self.watch = Watch(settings, source.job_name, event_log, self.context, source.rank_map)
        self.anomalies: Sequence[Anomaly] = ()

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
            await asyncio.sleep(max(0.05, self.settings.refresh_seconds - elapsed))

    async def poll_once(self) -> None:
        """Fetch one frame and hand it to the screens (through the message queue)."""
        try:
            frame = await self.source.poll()
        except Exception:
            self.post_message(PollFailed(self.source.status()))
            return
        anomalies, up = await asyncio.to_thread(self.detect, frame)
        self.post_message(FrameReady(frame, self.source.status(), anomalies, up))

    def detect(self, frame: Frame) -> tuple[list[Anomaly], int]:
        """The anomalies active in ``frame`` and how many ranks are up (in the poll worker's
        thread, off the UI's path)."""
        rank_map = self.source.rank_map
        return self.watch.update(frame, rank_map), sum(frame.ranks_up(len(rank_map)))

    async def on_frame_ready(self, message: FrameReady) -> None:
        if self.source.rank_map is not self.cluster.rank_map:
            await self.cluster.use_rank_map(self.source.rank_map)
        self.anomalies = message.anomalies
        self.cluster.show_frame(message.frame, message.status, message.anomalies,
                                message.ranks_up)
        if isinstance(self.screen, RankScreen):
            self.screen.show_frame(message.frame, message.anomalies)

    def open_rank(self, rank: int) -> None:
        """The rank screen of ``rank``, drawn at once from the latest frame."""
        if not len(self.cluster.rank_map):
            return
        screen = RankScreen(self.settings, self.cluster.rank_map, rank, self.watch.history,
                            self.context)
        self.push_screen(screen)
        screen.frame, screen.anomalies = self.cluster.frame, tuple(self.anomalies)

    def on_poll_failed(self, message: PollFailed) -> None:
        self.cluster.show_status(message.status)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))
