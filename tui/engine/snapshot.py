"""What the engine hands the UI after each poll: plain frozen values with version numbers.

The UI tells a new analysis, or a new rank map, by its version, never by which object it
is: values that crossed a process boundary are new objects every time."""

from __future__ import annotations

from dataclasses import dataclass

from ranktop.tui.core.analysis import Analysis


@dataclass(frozen=True)
class Snapshot:
    """One poll's analysis. ``version`` grows by one per analysis; ``rank_map_version``
    grows when the engine learned a different rank map (the first map is version 0)."""

    version: int
    analysis: Analysis
    rank_map_version: int
    retry_after: float = 0.0  # seconds the source asked to be left alone (0: none)
