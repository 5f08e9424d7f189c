"""A bundle reopened: an engine (``EngineClient``) that answers from what the bundle saved,
offline and read-only. Every poll gives the saved snapshot again; a rank's logs are the
excerpts saved, its history and alerts those saved; a rank not saved says so. A past moment
is asked of ``backend`` when one was given (the backend's history at the bundle's time, as
`--at` shows it), else it is one line saying why not."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..core.model import Rank, RankMap
from ..engine.client import EngineClient, EngineRefused
from ..engine.maps import MapBoard, MapGeometry, planned_safely
from ..engine.protocol import BUNDLE_READ_ONLY, PipesFound
from ..engine.replay import NothingThen
from ..engine.snapshot import RankHistory, RankMapVersions, Snapshot
from ..logs.tail import LogLine, LogSource
from .saved import RankSaved, Saved, SavedLog

NOT_SAVED = "not saved in the bundle (it keeps the ranks of its incidents and the one selected)"


class SavedLogSource:
    """A log excerpt saved in a bundle, shown as the rank screen shows a log: it never grows."""

    def __init__(self, saved: SavedLog) -> None:
        self.name = saved.name
        self.saved = saved

    def tail(self, lines: int) -> list[LogLine]:
        kept = self.saved.lines[-lines:] if lines > 0 else ()
        return [LogLine(line.text, line.kind, origin=line.origin) for line in kept]

    def follow(self) -> list[LogLine]:
        return []

    def close(self) -> None:
        """Nothing is open: the lines are in memory."""

    def sizes(self) -> dict[str, int]:
        return dict(self.saved.sizes)

    def status(self) -> str:
        ends = ", ".join(f"byte {size:,} of {Path(name).name}"
                         for name, size in self.saved.sizes.items())
        return (f"saved in the bundle: its last {len(self.saved.lines)} lines"
                + (f", up to {ends}" if ends else ""))


class BundleEngine:
    """The engine of `ranktop open`: the bundle's moment, on every screen."""

    def __init__(self, saved: Saved, backend: EngineClient | None = None) -> None:
        self.saved = saved
        self.backend = backend
        self.job_name = saved.job
        # Its rank maps numbered here, the backend's past moments' among them.
        self.latest: Snapshot = replace(saved.snapshot, rank_map_version=0, at=saved.moment)
        self.rank_maps = RankMapVersions(saved.snapshot.analysis.rank_map)
        self.board = MapBoard()

    async def poll(self, maps: Sequence[MapGeometry] | None = None) -> Snapshot:
        """The saved snapshot, its maps' levels planned for ``maps``."""
        self.board.reshape(maps)
        levels = await asyncio.to_thread(planned_safely, self.board, self.latest.analysis)
        return replace(self.latest, levels=levels)

    async def settle(self, timeout: float) -> Snapshot:
        return self.latest

    async def at(self, moment: float, maps: Sequence[MapGeometry] | None = None) -> Snapshot:
        if self.backend is None:
            raise NothingThen("a bundle holds one moment; give `ranktop open` the backend "
                              "(--prometheus URL --job NAME) to see others")
        past = await self.backend.at(moment, maps)
        return replace(past, rank_map_version=self.rank_maps.version_of(past.analysis.rank_map))

    async def rank_history(self, rank: int, at: float | None = None) -> RankHistory:
        if at is not None and at != self.saved.moment and self.backend is not None:
            return await self.backend.rank_history(rank, at)
        kept = self._rank(rank)
        return kept.history if kept is not None else RankHistory(rank, {})

    def open_logs(self, rank_map: RankMap, rank: int) -> tuple[list[LogSource], str]:
        kept = self._rank(rank)
        if kept is None:
            return [], f"rank {rank}'s logs are {NOT_SAVED}"
        return [SavedLogSource(log) for log in kept.logs], kept.logs_note

    def alert_rows(self, rank: Rank, until: float | None = None
                   ) -> tuple[list[tuple[str, ...]], str]:
        kept = self._rank(rank.rank)
        if kept is None:
            return [], f"rank {rank.rank}'s alerts are {NOT_SAVED}"
        return [tuple(row) for row in kept.alerts], kept.alerts_note

    def backfill(self, rank_map: RankMap, rank: int) -> tuple[dict, str]:
        return {}, "a bundle holds the history it saved, no more"

    def gpu_model(self, rank: int) -> str:
        kept = self._rank(rank)
        return kept.gpu_model if kept is not None else ""

    def queries(self) -> dict[str, str]:
        return {}

    def find_pipes(self) -> PipesFound:
        raise EngineRefused(BUNDLE_READ_ONLY)

    def request_dumps(self, pipes: dict[int, Path]) -> str:
        raise EngineRefused(BUNDLE_READ_ONLY)

    def restart(self) -> None:
        """Nothing runs apart: nothing to restart."""

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()

    def _rank(self, rank: int) -> RankSaved | None:
        return self.saved.ranks.get(rank)
