"""The one small interface every data source offers the app."""

from __future__ import annotations

from typing import Protocol

from ranktop.tui.core.model import Frame, RankMap, SourceStatus


class Source(Protocol):
    """A source of frames. ``poll`` never blocks the event loop: blocking work runs in a
    thread. It raises on failure; ``status`` then says what went wrong and since when."""

    name: str
    job_name: str
    rank_map: RankMap

    async def poll(self) -> Frame: ...

    def status(self) -> SourceStatus: ...
