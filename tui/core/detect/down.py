"""Ranks that are down: their series vanished after being seen, or never came at all.

A vanished series says a rank is not reporting, not that it died (a frozen process vanishes
too): "dead" is for the evidence of an exit (``ranktop.tui.core.hang.triage``). A rank that goes
down keeps what is known of it: since when it is down, its last values, and the
last hardware fault it had (an XID 79 seen two seconds before its series vanished is the
likely cause, and is said so).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..anomaly import Anomaly
from ..domain import SEVERITIES
from ..model import Frame, is_missing
from ..moment import shown
from .lookback import SEEN_SECONDS

# What the backend's failing scrape of a rank down says of its process (live only): a
# frozen one accepts the connection and never answers, a gone one refuses it.
SCRAPE_TIMING_OUT = "scrape timing out: alive but frozen?"
SCRAPE_REFUSED = "connection refused"
FAULT_MEMORY_SECONDS = 60.0  # a more severe fault this recent is not displaced by a lesser one
NEVER_NAMED = 8  # up to this many never-seen ranks get an anomaly each; past it, one for all


@dataclass(frozen=True)
class DownRank:
    """What is known of a rank whose series vanished."""

    rank: int
    since: float  # the first poll without it
    last_seen: float  # the last poll with it
    last_values: Mapping[str, float] = field(default_factory=dict)
    fault: str = ""  # its last hardware fault, e.g. "XID 79: GPU has fallen off the bus"
    fault_time: float | None = None
    scrape: str = ""  # why its scrape fails, as the last live poll said (SCRAPE_*, or other)

    @property
    def summary(self) -> str:
        if not self.fault or self.fault_time is None:
            return "its series vanished"
        before = max(0.0, self.since - self.fault_time)
        return f"{self.fault} ({before:.0f} s before), then its series vanished"


class Liveness:
    """Which ranks have been seen, which are gone since when, and their last faults."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.down: dict[int, DownRank] = {}
        self._faults: dict[int, tuple[float, str, str]] = {}  # rank -> (when, text, severity)
        self._previous: Frame | None = None
        self._started: float | None = None  # the first poll: never-seen ranks are since then
        self._before: dict[int, float] = {}  # rank -> when last seen, before the first poll
        self._before_step = 0.0  # ... looked for this many seconds apart
        self._looked_back = False  # whether the backend was asked who reported before

    def note_fault(self, rank: int, when: float, text: str, severity: str = "critical"
                   ) -> None:
        """A hardware fault on ``rank``: named again if the rank dies. Of the faults of the
        last minute the most severe is kept: an XID 79 is the cause, the PCIe replays
        that follow it are symptoms."""
        earlier = self._faults.get(rank)
        rank_of = SEVERITIES.index
        if (earlier is not None and when - earlier[0] <= FAULT_MEMORY_SECONDS
                and rank_of(earlier[2]) < rank_of(severity)):
            return
        if earlier is not None and earlier[1] == text:
            return  # the same fault still showing: it began when it was first seen
        self._faults[rank] = (when, text, severity)

    def seen_before(self, last_seen: Mapping[int, float], step: float) -> None:
        """Ranks the backend held before the first poll, each last seen when given (looked
        for ``step`` seconds apart): one down at the first poll went down after that."""
        self.seen |= set(last_seen)
        self._before, self._before_step = dict(last_seen), step
        self._looked_back = True

    def forget_guesses(self) -> None:
        """The ranks were guessed from DCGM's GPUs until now, and are the job's own from
        here: what the guessed ranks showed said nothing of the job's ranks. Only what the
        backend's lookback found under the job's rank label is kept."""
        self.seen = set(self._before)
        self.down = {rank: gone for rank, gone in self.down.items() if rank in self._before}

    def update(self, frame: Frame, up: Sequence[bool]) -> list[Anomaly]:
        """``missing`` for each rank gone after being seen, ``never_seen`` for the others."""
        now = frame.time
        self._started = now if self._started is None else self._started
        alive = {rank for rank, is_up in enumerate(up) if is_up}
        for rank in alive:
            self.down.pop(rank, None)
        # a rank not answered (a partial answer) is neither alive nor gone: as it was
        for rank in self.seen - alive - frame.unknown:
            if rank not in self.down:
                self.down[rank] = self._went_down(rank, now)
        self.seen |= alive
        self._previous = frame
        for rank, words in frame.scrape.items():
            if rank in self.down and self.down[rank].scrape != words:
                self.down[rank] = replace(self.down[rank], scrape=words)
        found = [Anomaly("missing", "critical", rank, _said(gone), gone.since)
                 for rank, gone in sorted(self.down.items())]
        return found + self._never_seen(up, frame.unknown, self._started)

    def _went_down(self, rank: int, now: float) -> DownRank:
        previous = self._previous
        last_values: dict[str, float] = {}
        since = last_seen = now
        if previous is not None:
            last_seen = previous.time
            last_values = {m: v for m in previous.values
                           if not is_missing(v := previous.value(m, rank))}
        elif rank in self._before:  # gone before the first poll: by one look after it was seen
            last_seen = self._before[rank]
            since = min(now, last_seen + self._before_step)
        fault_time, fault, _ = self._faults.get(rank, (None, "", ""))
        return DownRank(rank, since, last_seen, last_values, fault, fault_time)

    def _never_seen(self, up: Sequence[bool], unknown: frozenset[int], since: float
                    ) -> list[Anomaly]:
        if not self.seen:
            return []
        never = [rank for rank, is_up in enumerate(up)
                 if not is_up and rank not in self.seen and rank not in unknown]
        when = self._never_when()
        if len(never) > NEVER_NAMED:
            return [Anomaly("never_seen", "warning", never[0],
                            f"{len(never)} ranks have not reported {when}, "
                            f"e.g. rank {never[0]}", since)]
        return [Anomaly("never_seen", "warning", rank,
                        f"has not reported {when}: down before it?", since)
                for rank in never]

    def _never_when(self) -> str:
        """Since when a rank never seen has not reported: the backend's look back too."""
        if not self._looked_back:
            return "since ranktop started"
        return f"in the {SEEN_SECONDS / 60:.0f} min before ranktop started, nor since"


def _said(gone: DownRank) -> str:
    """"not reporting since 12:23:58 (scrape timing out: alive but frozen?; its series
    vanished)", or "gone since …" where the scrape is refused."""
    when = shown(gone.since)
    if gone.scrape == SCRAPE_REFUSED:
        return f"gone since {when} ({SCRAPE_REFUSED}; {gone.summary})"
    detail = f"{gone.scrape}; {gone.summary}" if gone.scrape else gone.summary
    return f"not reporting since {when} ({detail})"

