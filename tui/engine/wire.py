"""How a snapshot travels from an engine process to the UI: only what changed, packed.

Per poll the frame's values are most of a snapshot (22 metrics x 16,384 ranks). On the way
they are packed as 32-bit floats (7 significant digits: more than any value on screen
shows, and the analysis has been done on the full values already, which it took within a
32-bit float's range: ``model.bounded``, so none becomes an infinity), and a metric whose
values equal the ones sent the poll before is not sent at all (error counters, a failed
poll's frame): the UI puts back the ones it holds. The rank map likewise crosses only
when it changed. ``Sent`` is the engine's side, ``Received`` the UI's."""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..core.model import Frame, RankMap
from .snapshot import Snapshot

# In a snapshot whose rank map the UI already holds: it puts its own back in.
UNCHANGED_RANKS = RankMap((), (), 0, "unchanged")


class Sent:
    """What the UI already holds, as the engine packs each snapshot for it."""

    def __init__(self) -> None:
        self.rank_map_version: int | None = None
        self.values: Mapping[str, Sequence[float]] = {}

    def compact(self, snapshot: Snapshot) -> Snapshot:
        analysis = replace(snapshot.analysis, history=None)
        if snapshot.rank_map_version == self.rank_map_version:
            analysis = replace(analysis, rank_map=UNCHANGED_RANKS)
        self.rank_map_version = snapshot.rank_map_version
        if analysis.frame is not None:
            analysis = replace(analysis, frame=self._pack(analysis.frame))
        return replace(snapshot, analysis=analysis)

    def _pack(self, frame: Frame) -> Frame:
        packed: dict[str, array | None] = {}
        for metric, values in frame.values.items():
            same = self.values.get(metric)
            packed[metric] = None if same is not None and same == values else array("f", values)
        self.values = frame.values
        return replace(frame, values=packed)


class Received:
    """What the UI holds, to unpack each snapshot against."""

    def __init__(self) -> None:
        self.rank_map: RankMap | None = None
        self.values: Mapping[str, Sequence[float]] = {}

    def unpack(self, snapshot: Snapshot) -> Snapshot:
        analysis = snapshot.analysis
        if analysis.rank_map == UNCHANGED_RANKS and self.rank_map is not None:
            analysis = replace(analysis, rank_map=self.rank_map)
        self.rank_map = analysis.rank_map
        frame = analysis.frame
        if frame is not None:
            values = {metric: self.values[metric] if packed is None else packed
                      for metric, packed in frame.values.items()}
            self.values = values
            analysis = replace(analysis, frame=replace(frame, values=values))
        return replace(snapshot, analysis=analysis)
