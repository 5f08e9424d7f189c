"""Hardware error counters asked for their non-zero series only, and in full now and then.

ECC, XID, remapped rows, PCIe replays and NVLink CRC errors are zero on almost every GPU
almost always, yet asking for them returned every GPU's series every poll. Each poll now
asks only for the series above zero (``> 0``): a new fault is in the very poll that first
finds it scraped, as before, at no cost while there is none. Every ``FULL_EVERY`` polls
(and after the rank map changes) a poll asks for every series, to learn which GPUs export
the counter at all: between those, a GPU that did reads 0 when it is not among the
non-zero ones (while it answers at all: a GPU whose series are gone stays missing), and
one that did not stays missing. A GPU that stops exporting a counter
altogether reads 0 instead of missing until the next full read (at most FULL_EVERY polls).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ...core.model import MISSING

# The metric ids of the shipped configuration's error counters.
SLOW_COUNTERS = ("ecc_dbe", "xid", "remapped_rows", "row_remap_failure", "pcie_replay",
                 "nvlink_errors", "recovery_action")
FULL_EVERY = 15  # polls: 30 s at the default 2 s refresh


class SlowCounters:
    """Which form of each counter's query a poll sends, and its values filled in."""

    def __init__(self, metric_ids: Iterable[str] = SLOW_COUNTERS,
                 full_every: int = FULL_EVERY) -> None:
        self.ids = frozenset(metric_ids)
        self.full_every = full_every
        self.full = True  # whether the poll under way asks for every series
        self._polls = 0
        self._exported: dict[str, list[bool]] = {}  # metric -> GPUs that had a series

    def start_poll(self) -> None:
        self.full = self._polls % self.full_every == 0
        self._polls += 1

    def read_in_full(self) -> None:
        """The next poll asks for every series (the ranks have changed)."""
        self._polls = 0

    def ask(self, metric_id: str, expression: str) -> str:
        """The query this poll sends for the metric."""
        if self.full or metric_id not in self.ids:
            return expression
        return f"{expression} > 0"

    def values(self, metric_id: str, found: list[float] | None, live: list[float] | None
               ) -> list[float] | None:
        """The metric's values from what the poll ``found`` (None: no series): as found in
        a full read; else zero filled in where only non-zero ones came, for the GPUs that
        exported the counter at the last full read and still answer this poll (``live``:
        a metric every GPU exports, per rank; NaN where a GPU is gone)."""
        if metric_id not in self.ids or live is None:
            return found
        n = len(live)
        if self.full:
            self._exported[metric_id] = [not math.isnan(v) for v in found or [MISSING] * n]
            return found
        exported = self._exported.get(metric_id, ())
        if len(exported) != n or not any(exported):
            return found
        values = list(found) if found is not None else [MISSING] * n
        for rank, had in enumerate(exported):
            if had and math.isnan(values[rank]) and not math.isnan(live[rank]):
                values[rank] = 0.0
        return values
