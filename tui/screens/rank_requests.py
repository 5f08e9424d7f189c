"""What the rank screen asks of the engine, each in a worker of its own, and the messages
the workers post back: its rank's log (its tail, then what it gains), alerts, earlier
history and GPU model, and its history for a past moment. Nothing here waits on the app's
message pump; an engine that cannot answer is said, never waited for."""

from __future__ import annotations

import time
from dataclasses import replace

from textual import work
from textual.message import Message
from textual.screen import Screen
from textual.worker import get_current_worker

from ..core.analysis import Analysis
from ..core.model import RankMap
from ..engine.client import ENGINE_FAILURES, EngineClient
from ..engine.snapshot import RankHistory
from ..logs.tail import LogLine, LogSource

FOLLOW_SECONDS = 1.0
TAIL_LINES = 300


class LogLines(Message):
    def __init__(self, rank: int, lines: list[tuple[str, str, str]], note: str,
                 tail: bool = False) -> None:
        super().__init__()
        self.rank, self.lines, self.note = rank, lines, note
        self.tail = tail  # the log's tail: in place of what the view holds


class Backfill(Message):
    def __init__(self, rank: int, points: dict) -> None:
        super().__init__()
        self.rank, self.points = rank, points


class Alerts(Message):
    def __init__(self, rank: int, rows: list[tuple[str, ...]], note: str) -> None:
        super().__init__()
        self.rank, self.rows, self.note = rank, rows, note


class GpuModel(Message):
    def __init__(self, rank: int, model: str | None) -> None:
        super().__init__()
        self.rank, self.model = rank, model  # None: the engine could not say


class RankRequests(Screen):
    """A screen of one rank (``rank.RankScreen``): what it asks of the engine."""

    engine: EngineClient
    rank_map: RankMap
    rank: int
    moment: float | None  # the past moment shown (None: the live job)
    analysis: Analysis
    # The rank's history last had from the engine, for (rank, moment); the one asked for.
    _held_history: tuple[tuple[int, float | None], RankHistory] | None = None
    _history_asked: tuple[int, float | None] | None = None

    def _draw_values(self) -> None:
        """Draw the rank's values, trends and model again (the screen's own)."""
        raise NotImplementedError

    @work(thread=True, exclusive=True, group="rank-log", exit_on_error=False)
    def _follow_log(self, rank: int) -> None:
        """The rank's log tail, then what it gains, until another rank's or the screen's end
        cancels it; its logs are closed then (an engine apart holds them open till then).
        What the engine cannot answer is said, and the log opened again a moment later (a
        restarted engine has none of the old one's open)."""
        worker = get_current_worker()
        while not worker.is_cancelled:
            try:
                logs, note = self.engine.open_logs(self.rank_map, rank)
            except ENGINE_FAILURES as error:
                self.post_message(LogLines(rank, [], f"no log: {error}"))
            else:
                try:
                    self._tail_and_follow(rank, logs, note)
                    return
                except ENGINE_FAILURES as error:
                    self.post_message(LogLines(rank, [], f"the log stopped: {error}"))
                finally:
                    for log in logs:
                        log.close()
            time.sleep(FOLLOW_SECONDS)

    def _tail_and_follow(self, rank: int, logs: list[LogSource], note: str) -> None:
        worker = get_current_worker()
        lines = [line for log in logs for line in log.tail(TAIL_LINES)]
        self.post_message(LogLines(rank, [_shown(ln) for ln in lines], note, tail=True))
        while logs and not worker.is_cancelled:
            time.sleep(FOLLOW_SECONDS)
            new = [_shown(ln) for log in logs for ln in log.follow()]
            status = "; ".join(s for s in (log.status() for log in logs) if s)
            if new or status:
                self.post_message(LogLines(rank, new, status or note))

    @work(thread=True, exclusive=True, group="rank-alerts", exit_on_error=False)
    def _load_alerts(self, rank: int) -> None:
        try:
            # At a past moment, those of the hour before it: none that began after it.
            rows, note = self.engine.alert_rows(self.rank_map.ranks[rank], self.moment)
        except ENGINE_FAILURES as error:
            rows, note = [], str(error)
        self.post_message(Alerts(rank, rows, note))

    @work(thread=True, exclusive=True, group="rank-backfill", exit_on_error=False)
    def _backfill(self, rank: int) -> None:
        try:
            points, note = self.engine.backfill(self.rank_map, rank)
        except ENGINE_FAILURES as error:
            points, note = {}, f"no earlier history: {error}"
        if note:
            self.app.call_from_thread(self.notify, note, timeout=4, markup=False)
        self.post_message(Backfill(rank, points))

    @work(thread=True, exclusive=True, group="rank-gpu-model", exit_on_error=False)
    def _ask_gpu_model(self, rank: int) -> None:
        try:
            model: str | None = self.engine.gpu_model(rank)
        except ENGINE_FAILURES:
            model = None
        self.post_message(GpuModel(rank, model))

    def _ask_history(self) -> None:
        """Ask the engine for the rank's history where the analysis shown came without its
        own (an engine apart keeps it) or is a past moment's: in a worker, one request at a
        time (an answer still awaited is not asked again), never on the app's pump."""
        wanted = (self.rank, self.moment)
        fresh = self._held_history is not None and self._held_history[0] == wanted
        if self.moment is None and self.analysis.history is not None and not fresh:
            return  # the analysis carries the whole job's history (an engine in-process)
        if self._history_asked != wanted:
            self._history_asked = wanted
            self._rank_history(*wanted)

    @work(group="rank-history", exit_on_error=False)
    async def _rank_history(self, rank: int, moment: float | None) -> None:
        """The rank's history (up to ``moment``, or the newest), for its trends (never
        cancelled: an engine in another process answers every call; an answer no longer
        wanted is dropped)."""
        try:
            history = await self.engine.rank_history(rank, at=moment)
        except Exception:  # EngineStopped, EngineSilent: the trends keep what they have
            return
        finally:
            if self._history_asked == (rank, moment):
                self._history_asked = None
        if (rank, moment) == (self.rank, self.moment):
            self._held_history = ((rank, moment), history)
            self.analysis = replace(self.analysis, history=history)
            self._draw_values()


def _shown(line: LogLine) -> tuple[str, str, str]:
    """A log line as the log view takes it: its kind, its text and its file's name."""
    return line.kind, line.text, line.origin
