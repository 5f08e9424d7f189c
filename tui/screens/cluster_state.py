"""What the cluster screen's parts share: its state and what they read of it. The screen
(``cluster.ClusterScreen``) is made of its anomaly panel (``cluster_incidents``) and its
maps' layout (``cluster_layout``) over this."""

from __future__ import annotations

from textual.reactive import var
from textual.screen import Screen

from ...widgets.heatmap import Heatmap
from ...widgets.panel import MetricPanel
from ..core.analysis import Analysis
from ..core.model import Frame, RankMap, SourceStatus
from ..settings.config import Settings


class ClusterState(Screen):
    """The cluster screen's state, as its parts read it."""

    cursor = var(0, init=False)
    """The selected rank, shared by every map."""

    settings: Settings
    rank_map: RankMap
    status: SourceStatus

    @property
    def analysis(self) -> Analysis:
        """The analysis drawn."""
        raise NotImplementedError

    @property
    def frame(self) -> Frame | None:
        raise NotImplementedError

    @property
    def waiting_since(self) -> float | None:
        """Since when the live job's first answer is awaited (None: it came)."""
        raise NotImplementedError

    @property
    def panels(self) -> list[MetricPanel]:
        raise NotImplementedError

    def select(self, rank: int) -> None:
        """Move the cursor to ``rank`` on every map."""
        raise NotImplementedError

    def _lead_heatmap(self) -> Heatmap:
        raise NotImplementedError
