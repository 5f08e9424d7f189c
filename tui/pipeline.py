"""One poll of a source and its analysis, the same for the console and `ranktop report`:
source.poll() -> Frame -> Analyser -> Analysis."""

from __future__ import annotations

import asyncio

from ranktop.tui.core.analysis import Analyser, Analysis
from ranktop.tui.core.events import EventLog
from ranktop.tui.logs.rank_logs import RankLogs
from ranktop.tui.settings.config import Settings
from ranktop.tui.sources.base import Source


class Pipeline:
    """A source and the analysis of its frames; ``poll`` never blocks the event loop."""

    def __init__(self, settings: Settings, source: Source,
                 event_log: EventLog | None = None) -> None:
        self.source = source
        self.logs = RankLogs(settings.log_spec or getattr(source, "log_spec", ""))
        triage_lines = self.logs.triage_lines if self.logs.spec else None
        self.analyser = Analyser(settings, source.job_name, event_log, triage_lines)
        self.error = ""  # why the last poll failed; "" when it did not

    @property
    def latest(self) -> Analysis:
        """The newest analysis, or an empty one before the first poll."""
        if self.analyser.last is not None:
            return self.analyser.last
        return Analysis(self.source.status(), self.source.rank_map)

    async def poll(self) -> Analysis:
        """Poll the source once and analyse what it gave (a failed poll keeps the last
        analysis under the source's new status)."""
        try:
            frame = await self.source.poll()
        except Exception as error:
            self.error = str(error) or error.__class__.__name__
            return self.analyser.failed(self.source.status(), self.source.rank_map)
        self.error = ""
        return await asyncio.to_thread(self.analyser.analyse, frame, self.source.status(),
                                       self.source.rank_map)
