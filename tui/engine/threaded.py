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
from ..core.maps.levels import MapLevels
from ..core.model import Rank, RankMap
from ..core.moment import JobEnd
from ..logs.tail import LogSource
from ..settings.config import Settings
from ..sources.base import Source
from .dump_pipes import dumps_asked, pipes_found
from .job_end import EndWatch
from .maps import MapGeometry, plan_maps
from .pipeline import Pipeline
from .protocol import PipesFound
from .rank_data import RankData
from .replay import Replay
from .snapshot import RankHistory, Snapshot


class ThreadEngine:
    """A source and everything worked out from it, behind ``EngineClient``."""

    def __init__(self, settings: Settings, source: Source, event_log: EventLog | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.source = source
        self.job_name = source.job_name
        self.pipeline = Pipeline(settings, source, event_log, clock)
        self.replay = Replay(settings, source)
        self.rank_data = RankData(settings, source.job_name, event_log, self.pipeline.logs,
                                  settings.alertmanager_url, source)
        first = self.pipeline.latest
        self._rank_map = first.rank_map
        self.latest = Snapshot(0, first, 0)
        self.end_watch = EndWatch(source)
        self.ended: JobEnd | None = None  # the job's series ended, as the last poll found

    async def poll(self) -> Snapshot:
        analysis = await self.pipeline.poll()
        self.ended = await asyncio.to_thread(self.end_watch.after, analysis,
                                             self.pipeline.clock())
        return self._publish(analysis)

    async def settle(self, timeout: float) -> Snapshot:
        return self._publish(await self.pipeline.settle(self.latest.analysis, timeout))

    async def plan_maps(self, version: int,
                        maps: Sequence[MapGeometry]) -> Mapping[str, MapLevels]:
        latest = self.latest
        if latest.version != version:
            return {}  # a newer poll's levels will follow
        try:
            return await asyncio.to_thread(plan_maps, latest.analysis, maps)
        except Exception:  # the widgets then plan them themselves: a poll must not stop here
            return {}

    def _publish(self, analysis: Analysis) -> Snapshot:
        rank_map_version = self.latest.rank_map_version
        if analysis.rank_map != self._rank_map:
            self._rank_map = analysis.rank_map
            rank_map_version += 1
        self.latest = Snapshot(self.latest.version + 1, analysis, rank_map_version,
                               self.source.retry_after or 0.0, self.pipeline.error,
                               ended=self.ended)
        return self.latest

    # -- a rank's requests -------------------------------------------------------------

    async def at(self, moment: float) -> Snapshot:
        analysis = await asyncio.to_thread(self.replay.at, moment)
        assert analysis.frame is not None
        latest = self.latest
        return Snapshot(latest.version, analysis, latest.rank_map_version, at=analysis.frame.time)

    async def rank_history(self, rank: int, at: float | None = None) -> RankHistory:
        if at is None:
            return RankHistory.of(self.latest.analysis.history, rank)
        return RankHistory.of((await self.at(at)).analysis.history, rank)

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
        self.replay.close()
        self.source.close()
