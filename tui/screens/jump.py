"""The cluster screen's `/` search: type a rank number, a host name, host:gpu, or a node as
the maps label it (n37, n37:5), and the cursor goes there."""

from __future__ import annotations

import re

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from ..core.model import RankMap


class JumpScreen(ModalScreen[int | None]):
    """Returns the rank to select, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="jump.cancel")]
    KEY_WIDGETS = (Input,)  # widgets whose keys are live here (the keymap's clash check)

    def __init__(self, rank_map: RankMap) -> None:
        super().__init__()
        self.rank_map = rank_map

    def compose(self) -> ComposeResult:
        with Vertical(id="jump-box"):
            yield Label(f"Search the ranks: rank (0-{len(self.rank_map) - 1}), host, "
                        "host:gpu, or node (n37)")
            yield Input(placeholder="e.g. 37, gpu-node-004, gpu-node-004:5, n37, n37:5",
                        id="jump-input")
            yield Label("", id="jump-error", markup=False)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        rank = find_rank(self.rank_map, event.value)
        if rank is None:
            self.query_one("#jump-error", Label).update(
                Text(f"No rank, host or node matches {event.value!r}"))
            return
        self.dismiss(rank)

    def action_cancel(self) -> None:
        self.dismiss(None)


NODE = re.compile(r"n(\d+)(?::(\d+))?")


def find_rank(rank_map: RankMap, text: str) -> int | None:
    """The rank ``text`` names: a host of that exact name first, then a node as the maps'
    margins label it (``n37``: its first GPU; ``n37:5``: its sixth), then a rank number,
    host or host:gpu."""
    query = text.strip()
    node = NODE.fullmatch(query.lower())
    named = any(r.host == query.partition(":")[0] for r in rank_map.ranks)
    if node is not None and not named:
        per_node = rank_map.gpus_per_node
        gpu = int(node[2] or 0)
        rank = int(node[1]) * per_node + gpu
        return rank if gpu < per_node and rank < len(rank_map) else None
    found = rank_map.find(query)
    return None if found is None else found.rank
