"""The engine with its blocking work in threads: the source, the pipeline and the rank
data. It runs in the UI's process for the tests, the demo (and its fake clock) and NVML
alone, and inside the engine process (``serve``) otherwise; either way it answers the
``EngineClient`` requests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..core.analysis import Analysis
from ..core.events import EventLog
from ..core.maps.levels import PlannedMap
from ..core.model import Rank, RankMap
from ..core.moment import JobEnd
from ..logs.tail import LogSource
from ..settings.config import Settings
from ..sources.base import Source
from .dump_pipes import dumps_asked, pipes_found
from .job_end import EndWatch
from .maps import MapBoard, MapGeometry, planned_safely
from .pipeline import Pipeline
from .prefetch import Prefetch
from .protocol import PipesFound
from .rank_data import RankData
from .replay import Replay
from .snapshot import RankHistory, RankMapVersions, Snapshot


class ThreadEngine:
    """A source and everything worked out from it, behind ``EngineClient``."""

    def __init__(self, settings: Settings, source: Source, event_log: EventLog | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.source = source
        self.job_name = source.job_name
        self.pipeline = Pipeline(settings, source, event_log, clock)
        self.replay = Replay(settings, source, logs=self.pipeline.logs)
        self.prefetch = Prefetch(self.replay)  # the moments next to the one shown
        self.rank_data = RankData(settings, source.job_name, event_log, self.pipeline.logs,
                                  settings.alertmanager_url, source)
        first = self.pipeline.latest
        self.rank_maps = RankMapVersions(first.rank_map)
        self.board = MapBoard()
        self.latest = Snapshot(0, first, 0)
        self.end_watch = EndWatch(source)
        self.ended: JobEnd | None = None  # the job's series ended, as the last poll found

    async def poll(self, maps: Sequence[MapGeometry] | None = None) -> Snapshot:
        self.board.reshape(maps)
        with self.prefetch.polling():
            analysis = await self.pipeline.poll()
        self.ended = await asyncio.to_thread(self.end_watch.after, analysis,
                                             self.pipeline.clock())
        levels = await asyncio.to_thread(planned_safely, self.board, analysis)
        return self._publish(analysis, levels)

    async def settle(self, timeout: float) -> Snapshot:
        return self._publish(await self.pipeline.settle(self.latest.analysis, timeout))

    def _publish(self, analysis: Analysis,
                 levels: Mapping[str, PlannedMap] | None = None) -> Snapshot:
        self.latest = Snapshot(self.latest.version + 1, analysis,
                               self.rank_maps.version_of(analysis.rank_map),
                               self.source.retry_after or 0.0, self.pipeline.error,
                               ended=self.ended, levels=levels or {})
        return self.latest

    # -- a rank's requests -------------------------------------------------------------

    async def at(self, moment: float, maps: Sequence[MapGeometry] | None = None) -> Snapshot:
        self.board.reshape(maps)
        analysis = await asyncio.to_thread(self.replay.at, moment)
        assert analysis.frame is not None
        self.prefetch.around(moment)
        levels = await asyncio.to_thread(planned_safely, self.board, analysis)
        return Snapshot(self.latest.version, analysis,
                        self.rank_maps.version_of(analysis.rank_map), at=analysis.frame.time,
                        levels=levels)

    async def rank_history(self, rank: int, at: float | None = None) -> RankHistory:
        if at is None:
            return RankHistory.of(self.latest.analysis.history, rank)
        analysis = await asyncio.to_thread(self.replay.at, at)
        return RankHistory.of(analysis.history, rank)

    def open_logs(self, rank_map: RankMap, rank: int) -> tuple[list[LogSource], str]:
        return self.rank_data.open_logs(rank_map, rank)

    def alert_rows(self, rank: Rank, until: float | None = None
                   ) -> tuple[list[tuple[str, ...]], str]:
        return self.rank_data.alert_rows(rank, until)

    def backfill(self, rank_map: RankMap, rank: int) -> tuple[dict, str]:
        return self.rank_data.backfill(rank_map, rank)

    def gpu_model(self, rank: int) -> str:
        return self.rank_data.gpu_model(rank)

    def queries(self) -> dict[str, str]:
        return self.source.queries()

    def find_pipes(self) -> PipesFound:
        return pipes_found(self.settings, len(self.latest.analysis.rank_map))

    def request_dumps(self, pipes: dict[int, Path]) -> str:
        return dumps_asked(self.settings, pipes)

    def restart(self) -> None:
        """Nothing to do: an engine in this process cannot stop apart from it."""

    def close(self) -> None:
        self.prefetch.close()
        self.replay.close()
        self.source.close()
