"""What the rank screen asks the engine for, in its thread workers: a rank's log files, its
alerts, its history from before the console started and its GPU model.

Every way of coming up empty is said, so an empty panel is never a mystery: no log pattern
configured, no file matching it, no Alertmanager configured, Prometheus unreachable.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..core.events import EventLog
from ..core.history import HISTORY_METRICS
from ..core.model import Rank, RankMap
from ..core.moment import shown
from ..logs.rank_logs import RankLogs
from ..logs.tail import LogSource
from ..settings.config import Settings

if TYPE_CHECKING:
    from ..sources.alerts import AlertRecord
    from ..sources.base import Source

ALERT_WINDOW_SECONDS = 3600.0
BACKFILL_SECONDS = 600.0
BACKFILL_STEP = 4.0


class RankData:
    """The engine's answers to the rank screen's requests: logs, alerts, the source's history."""

    def __init__(self, settings: Settings, job_name: str, event_log: EventLog | None,
                 logs: RankLogs | None = None, alertmanager_url: str = "",
                 source: Source | None = None) -> None:
        self.settings = settings
        self.source = source  # for its history, when it can give one
        self.job_name = job_name
        self.event_log = event_log
        self.logs = logs or RankLogs("")
        self.alertmanager_url = alertmanager_url

    def open_logs(self, rank_map: RankMap, rank: int) -> tuple[list[LogSource], str]:
        """The rank's log files, and a note on what was found."""
        logs, note = self.logs.open(rank_map, rank)
        return list(logs), note

    def alert_rows(self, rank: Rank, until: float | None = None
                   ) -> tuple[list[tuple[str, ...]], str]:
        """This rank's alerts of the last hour, newest first, and why any source is absent;
        with ``until`` (a bundle's moment), those of the hour before it, the alerts that
        began after it left out and counted in the note."""
        # Imported here: the alert sources bring the HTTP client, which a demo never needs
        # before the rank screen opens (it costs the launch tens of milliseconds).
        from ..sources.alerts import (
            alertmanager_alerts,
            merge,
            prometheus_history,
            ranktop_history,
        )

        end = time.time() if until is None else until  # of the hour read
        notes: list[str] = []
        asked = self.source.held(rank) if self.source is not None else rank
        found: list[list[AlertRecord]] = []
        if self.event_log is not None:
            events = self.event_log.read(since=end - ALERT_WINDOW_SECONDS, rank=rank.rank,
                                         job=self.job_name)
            found.append(ranktop_history(events, rank))
            if self.event_log.warnings:  # newest last: a broken or unwritable event log
                notes.append(f"event log: {self.event_log.warnings[-1]}")
        prometheus = self.settings.prometheus
        if prometheus is not None and prometheus.url:
            found.append(self._try("Prometheus", notes, lambda: prometheus_history(
                self.settings, asked, ALERT_WINDOW_SECONDS, end)))
        else:
            notes.append("no Prometheus configured")
        if self.alertmanager_url:
            found.append(self._try("Alertmanager", notes, lambda: alertmanager_alerts(
                self.alertmanager_url, self.settings, asked)))
        else:
            notes.append("no Alertmanager configured (--alertmanager URL)")
        records = merge(*found)
        after = [] if until is None else [r for r in records if r.time > until]
        records = [r for r in records if until is None or r.time <= until]
        hour = "the last hour" if until is None else "the hour before the moment"
        head = f"{len(records)} in {hour}" if records else f"none for this rank in {hour}"
        if after:
            notes.insert(0, f"{len(after)} that began after the moment left out")
        rows = [(shown(r.time), r.name, r.severity, r.state, r.source, r.summary)
                for r in records]
        return rows, "; ".join([head, *notes])

    def backfill(self, rank_map: RankMap, rank: int) -> tuple[dict, str]:
        """The rank's history from before the app started, where the source can say."""
        if self.source is None:
            return {}, ""
        from ..sources.prometheus.client import QueryError  # a source that backfills has it

        try:
            return (self.source.backfill(rank, HISTORY_METRICS, BACKFILL_SECONDS, BACKFILL_STEP),
                    "")
        except QueryError as error:
            return {}, f"no earlier history: {error}"

    def gpu_model(self, rank: int) -> str:
        """The rank's GPU model where the source knows it, else ""."""
        return self.source.gpu_model(rank) if self.source is not None else ""

    @staticmethod
    def _try(name: str, notes: list[str], read) -> list[AlertRecord]:
        from ..sources.alerts import NO_ALERTS
        from ..sources.prometheus.client import QueryError

        try:
            return read()
        except QueryError as error:
            unreachable = "" if error.kind == NO_ALERTS else " unreachable"
            notes.append(f"{name}{unreachable}: {error}")
            return []
