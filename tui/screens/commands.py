"""The command palette (ctrl+p): go to a rank or host, show a metric, change the view, show
a past moment (typing a time offers it)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from ..core.moment import MomentError, parse_moment, shown
from .cluster import ClusterScreen
from .data_text import escaped


class RanktopCommands(Provider):
    """Namespaced commands for the cluster screen; typing a rank or host offers to go there."""

    def _cluster(self) -> ClusterScreen | None:
        screen = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        return screen if isinstance(screen, ClusterScreen) else None

    def _commands(self, cluster: ClusterScreen) -> list[tuple[str, Callable[[], None], str]]:
        metrics = cluster.settings.metrics
        commands = [
            (f"metric: show {metrics[metric_id].title} full size",
             partial(cluster.action_solo, index), f"Map {index + 1} alone, every rank")
            for index, metric_id in enumerate(cluster.map_metrics)
        ]
        commands += [
            ("view: all four maps", cluster.action_all_maps, "Back to the four maps"),
            ("view: flip step time / compute time", cluster.action_flip_step,
             "Stragglers show in compute time"),
            ("view: zoom in or out of the cursor's node", cluster.action_zoom,
             "Rank by rank around the cursor"),
            ("view: pause or resume", cluster.action_pause, "Freeze the screen"),
            ("time: show the job at a time you type", self.app.action_ask_moment,
             "03:12:40, -15m, an ISO time: the job as it was then"),
            ("time: where the selected anomaly began", cluster.action_since,
             "The job as it was when it began"),
            ("time: back to live", self.app.action_live, "From a past moment"),
        ]
        return commands

    async def discover(self) -> Hits:
        cluster = self._cluster()
        if cluster is None:
            return
        for name, callback, help_text in self._commands(cluster):
            yield DiscoveryHit(Content(name), callback, help=help_text)

    async def search(self, query: str) -> Hits:
        cluster = self._cluster()
        if cluster is None:
            return
        moment = _moment_in(query, self.app.clock())
        if moment is not None:
            yield Hit(1.0, Content(f"time: show the job at {shown(moment)}"),
                      partial(self.app.go_to_moment, moment), help="As it was then")
        rank = cluster.rank_map.find(query)
        if rank is not None:
            yield Hit(1.0, Content(f"rank: go to {rank.title}"),
                      partial(cluster.select, rank.rank), help="Move the cursor there")
        for score, host, first in _hosts_containing(cluster, query, rank):
            yield Hit(score, Content(f"host: go to {host} (rank {first})"),
                      partial(cluster.select, first), help="Move the cursor to its first GPU")
        matcher = self.matcher(query)
        for name, callback, help_text in self._commands(cluster):
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(escaped(name)), callback, help=help_text)


HOSTS_OFFERED = 50


def _moment_in(query: str, now: float) -> float | None:
    """The past moment ``query`` names, if it names one."""
    try:
        return parse_moment(query, now)
    except MomentError:
        return None


def _hosts_containing(cluster: ClusterScreen, query: str, found: object
                      ) -> list[tuple[float, str, int]]:
    """Hosts whose name holds the query (any case), with their first rank: "gpu-node-02"
    offers all ten of gpu-node-020 to gpu-node-029, not only the one it names exactly."""
    wanted = query.strip().lower()
    if len(wanted) < 2:
        return []
    taken = getattr(found, "host", None)
    first: dict[str, int] = {}
    for rank in cluster.rank_map.ranks:
        if rank.host not in first and wanted in rank.host.lower() and rank.host != taken:
            first[rank.host] = rank.rank
            if len(first) == HOSTS_OFFERED:
                break
    return [(0.9 - 0.001 * index, host, rank) for index, (host, rank) in
            enumerate(first.items())]
