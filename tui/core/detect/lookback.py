"""What the backend still holds of the minutes before ranktop's first poll, so that a
console or report started late judges as one that had been watching would.

Two things cannot be judged from a late start's own polls: the job's values whose detectors
compare with a window of the past (the loss against its usual level, the throughput against its
recent median: started after a divergence, the lowest seen would be the diverged loss), and
which ranks were up before (a rank dead before the start is *missing*, not *never seen*),
and the hardware error counters' values before the start (errors that rose in the minutes
before it are new errors, not its baseline). A source that can look back offers
``lookback``; the first analysis starts from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

# The job's values whose detectors judge by a window of their past.
WINDOWED_JOB_VALUES = ("loss", "tokens_per_s")
# How far back a rank that reported counts as seen (then gone: missing), and at what
# resolution it is looked for.
SEEN_SECONDS = 900.0
SEEN_STEP = 10.0


@dataclass(frozen=True)
class Lookback:
    """The job's values over the window its detectors need, when each rank last reported
    within ``SEEN_SECONDS`` (looked for every ``seen_step`` seconds), and the error
    counters before the start."""

    job: Mapping[str, Sequence[tuple[float, float]]] = field(default_factory=dict)
    last_seen: Mapping[int, float] = field(default_factory=dict)
    seen_step: float = SEEN_STEP
    # each error counter's lowest value per rank (NaN: none) over the ledger's window before
    # ``counters_at``: where it stood before any rise in that window
    counters: Mapping[str, Sequence[float]] = field(default_factory=dict)
    counters_at: float = 0.0


class LooksBack(Protocol):
    """A source that can say what it held before the first poll (blocking)."""

    def lookback(self, job_values: Sequence[str], seconds: float, step: float
                 ) -> Lookback: ...
