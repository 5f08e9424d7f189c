"""Who else is on the nodes the advice drains, asked of the source as the polls go.

Only the nodes of a drain action are asked about, and each answer (or failure) is kept
for ``KEPT_SECONDS``: a drain that stays on screen costs one small query a minute, and a
poll without a drain none. A failure is kept as one line for that node ("not known"),
never as an error of the poll."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ..core.advice.advise import DRAIN, Action
from ..core.advice.tenants import Neighbours, NodeTenants, failed
from ..sources.base import Source

KEPT_SECONDS = 60.0


def drained_nodes(actions: Sequence[Action]) -> list[str]:
    """The nodes the actions drain, each once, in their order."""
    return list(dict.fromkeys(a.node for a in actions if a.kind == DRAIN and a.node))


class NeighbourCache:
    """The source's answers about nodes, each kept ``KEPT_SECONDS``."""

    def __init__(self, source: Source, clock: Callable[[], float] = time.time) -> None:
        self.source = source
        self.clock = clock
        self._known: dict[str, tuple[float, NodeTenants | None]] = {}  # node -> (when, what)

    def of(self, actions: Sequence[Action]) -> Neighbours:
        """Who else is on each drained node, asking the source (blocking) only about the
        nodes not asked of late; a node the source could not tell of is left out."""
        nodes = drained_nodes(actions)
        now = self.clock()
        due = [n for n in nodes if n not in self._known
               or now - self._known[n][0] >= KEPT_SECONDS]
        if due:
            answers = self._ask(due)
            self._known.update((node, (now, answers.get(node))) for node in due)
        return {node: found for node in nodes if (found := self._known[node][1]) is not None}

    def _ask(self, nodes: list[str]) -> dict[str, NodeTenants]:
        try:
            return self.source.tenants(nodes)
        except Exception as error:  # said with the drain, not as the poll's failure
            return failed(nodes, "the backend could not say: "
                          + (str(error) or error.__class__.__name__))
