"""The frames a replay analyses, fetched from the source's past and kept a while: stepping
back one refresh fetches one frame more, not the whole window again.

Frames are kept up to ``FRAME_VALUES_KEPT`` values in all (at 16,384 ranks a frame is
megabytes), the oldest fetched going first, and never all held at once while fetched:
they are given as they come. A frame kept holds its values packed, 8 bytes each (a list
of floats takes 32): twelve frames of 16,384 ranks took 146 MB, now 36."""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import replace

from ..core.model import Frame, RankMap
from ..sources.base import Source

FRAME_VALUES_KEPT = 4_000_000  # fetched frames kept for stepping: values of all of them
PROBE_FRAMES = 30  # a longer look finds where the job began a stretch this long at a time

Found = tuple[Frame, RankMap] | tuple[None, None]


class PastFrames:
    """``source``'s frames at past times, those fetched kept (bounded)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.values_per_frame = 0  # the newest frame's values (0: none fetched yet)
        self._kept: OrderedDict[float, tuple[Frame, RankMap]] = OrderedDict()
        self._keeping = threading.Lock()  # a replay and a prefetch may fetch at once

    def __len__(self) -> int:
        return len(self._kept)

    def at(self, times: Sequence[float]) -> Iterator[Found]:
        """The frames at ``times`` as they come, oldest first: those kept, and the others
        fetched a run at a time; (None, None) for a kept one pushed out meanwhile and no
        longer there."""
        run: list[float] = []
        for moment in times:
            if moment not in self._kept:
                run.append(moment)
                continue
            yield from self.fetch(run)
            run = []
            kept = self._kept.get(moment)  # the run's frames may have pushed it out
            yield kept if kept is not None else next(self.fetch([moment]), (None, None))
        yield from self.fetch(run)

    def fetch(self, times: Sequence[float]) -> Iterator[tuple[Frame, RankMap]]:
        """The source's frames at ``times``, kept as they come."""
        if not times:
            return
        for frame, rank_map in self.source.frames_at(times):
            self._keep(frame, rank_map)
            yield frame, rank_map

    def since_the_job_began(self, times: list[float], known: float) -> list[float]:
        """``times`` from the first the source has a frame for: those before ``known`` (a
        time it has one for) are looked at back from it, ``PROBE_FRAMES`` at a time, and a
        stretch without any frame ends the look (the job had not begun, or was not
        scraped). The frames found are kept, for the replay that follows."""
        earlier = [t for t in times if t < known]
        first = len(earlier)
        while first > 0:
            stretch = earlier[max(0, first - PROBE_FRAMES):first]
            found = [frame.time for frame, _ in self.fetch(stretch)]
            if not found:
                break
            first = earlier.index(found[0]) if found[0] in earlier else first - len(stretch)
            if len(found) < len(stretch):
                break
        return earlier[first:] + [t for t in times if t >= known]

    def _keep(self, frame: Frame, rank_map: RankMap) -> None:
        per_frame = self.values_per_frame = max(1, sum(map(len, frame.values.values())))
        packed = replace(frame, values={metric: array("d", values)
                                        for metric, values in frame.values.items()})
        with self._keeping:
            self._kept[frame.time] = (packed, rank_map)
            while len(self._kept) > max(1, FRAME_VALUES_KEPT // per_frame):
                self._kept.popitem(last=False)

    def clear(self) -> None:
        with self._keeping:
            self._kept.clear()
