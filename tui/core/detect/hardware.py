"""A hardware-error ledger per rank, from whatever error counters the exporter has.

dcgm-exporter's default counters show an uncorrectable memory error only as a remapped row,
and its PCIe and NVLink error counters are running totals that some GPUs carry from long
ago. So a counter is judged by how much it *rose* over the last few minutes, never by its
total: a total of 12 PCIe replays that has not moved in a week is not an incident, one more
remapped row is. Memory stays flat: one snapshot of each counter every ``SNAPSHOT_SECONDS``.

A counter's rise is measured from its value at the window's start. Where a GPU answered
then (its probe metric, or another of its counters, had a value) but had no series of the
counter, the counter stood at 0: dcgm-exporter leaves some counters blank until their first
event, and the source asks for the non-zero ones only (prom_counters), so a series that
appears while ranktop watches is that many new errors, not a baseline. A GPU that did not
answer at all (down, or not known yet) is judged from its first value in the window, and a
counter whose query went unanswered is not known to have been 0.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..anomaly import Anomaly, Hold
from ..domain import GPU_PROBE_METRIC
from ..model import MISSING, Frame, is_missing

WINDOW_SECONDS = 600.0
SNAPSHOT_SECONDS = 30.0


@dataclass(frozen=True)
class Counter:
    """One error counter: the anomaly it raises when it rises, and how it is said."""

    metric: str
    kind: str
    severity: str
    noun: str  # "remapped row(s)"
    meaning: str  # what a rise means for the GPU
    flag: bool = False  # a 0/1 state rather than a count: any non-zero value is the fault
    min_rise: float = 1  # the rise over the window that makes it an anomaly
    per_node: bool = False  # one anomaly per node (a link fault shows on every GPU of it)

    def alarming(self, entry: LedgerEntry) -> bool:
        return self.flag or entry.rise >= self.min_rise


COUNTERS = (
    Counter("remapped_rows", "memory", "critical", "row(s) remapped",
            "an uncorrectable memory error"),
    Counter("row_remap_failure", "remap_failure", "critical", "row remap failure",
            "the GPU ran out of spare rows: drain it for a reset or RMA", flag=True),
    # A few link errors are retried away and cost little; a burst is a link going bad.
    Counter("nvlink_errors", "nvlink_errors", "major", "NVLink CRC error(s)",
            "a flaky NVLink", min_rise=100, per_node=True),
    Counter("pcie_replay", "pcie", "warning", "PCIe replay(s)", "a flaky PCIe link",
            min_rise=10),
)
COUNTER_METRICS = tuple(counter.metric for counter in COUNTERS)


@dataclass(frozen=True)
class LedgerEntry:
    """A counter of one rank: its total now and how much it rose over the window."""

    counter: Counter
    total: float
    rise: float
    raised: bool = False  # an anomaly now: past its bar, or past it before and still up

    def text(self) -> str:
        if self.counter.flag:
            return f"{self.counter.noun}: {self.counter.meaning}"
        minutes = WINDOW_SECONDS / 60
        return (f"{self.counter.noun} +{self.rise:.0f} in the last {minutes:.0f} min "
                f"({self.total:.0f} in all): {self.counter.meaning}")


@dataclass(frozen=True)
class CounterSnapshot:
    """The counters of one poll: each one's values (``series``), the counters asked and
    answered without a series (``blank``), and which GPUs answered at all (``gpus``)."""

    time: float
    series: Mapping[str, array]
    blank: frozenset[str]
    gpus: array  # 1 where the GPU answered that poll

    @classmethod
    def of(cls, frame: Frame) -> CounterSnapshot:
        present = [c.metric for c in COUNTERS if c.metric in frame.values]
        series = {metric: array("d", frame.values[metric]) for metric in present}
        blank = frozenset(c.metric for c in COUNTERS
                          if c.metric not in frame.values and c.metric not in frame.unanswered)
        return cls(frame.time, series, blank, _answered(frame, present))

    def value(self, metric: str, rank: int) -> float:
        """The counter's value on ``rank`` then: 0 where the GPU answered without a series
        of it; MISSING where unknown (the GPU or the query did not answer)."""
        series = self.series.get(metric)
        if series is not None and rank < len(series) and not is_missing(series[rank]):
            return series[rank]
        answered = rank < len(self.gpus) and self.gpus[rank]
        if answered and (metric in self.blank or series is not None):
            return 0.0
        return MISSING


def _answered(frame: Frame, counters: Sequence[str]) -> array:
    """For each rank, 1 where its GPU answered the poll: its probe metric or one of its
    counters has a value."""
    columns = [frame.values[m] for m in (GPU_PROBE_METRIC, *counters) if m in frame.values]
    size = max((len(column) for column in columns), default=0)
    gpus = array("b", bytes(size))
    for column in columns:
        for rank, value in enumerate(column):
            if value == value:  # not NaN
                gpus[rank] = 1
    return gpus


class Ledger:
    """Every rank's error counters, judged by their rise over the last ``WINDOW_SECONDS``."""

    def __init__(self) -> None:
        self._snapshots: deque[CounterSnapshot] = deque()
        self._holds = {c.metric: Hold(c.kind, c.severity, 0) for c in COUNTERS}
        self.entries: dict[int, tuple[LedgerEntry, ...]] = {}
        self._alarmed: set[tuple[str, int | None]] = set()  # (metric, rank) raised last poll

    def update(self, frame: Frame, nodes: Mapping[int, Sequence[int]] | None = None,
               silent: frozenset[int] | None = None) -> list[Anomaly]:
        """An anomaly per rank and counter that rose within the window (or is set); for a
        per-node counter, one per node (``nodes``: each node's ranks by its first rank),
        placed on the GPU whose counter rose most and naming its GPUs, worst first. A
        counter of a ``silent`` GPU (``silent_gpus``, worked out here if not given) is held
        as it was."""
        counters = [c for c in COUNTERS if c.metric in frame.values]
        silent = silent_gpus(frame) if silent is None else silent
        self._snapshot(frame)
        entries: dict[int, list[LedgerEntry]] = {}
        found: list[Anomaly] = []
        alarmed: set[tuple[str, int]] = set()
        for counter in counters:
            rising = self._rising(counter, frame.values[counter.metric], entries)
            alarmed |= {(counter.metric, rank) for rank in rising}
            rises = {rank: _entry(entries, rank, counter).rise for rank in rising}
            if counter.per_node and nodes:
                rising = _by_node(counter, rising, entries, nodes)
                node_of = {rank: ranks for ranks in nodes.values() for rank in ranks}
                rises = {worst: sum(rises.get(r, 0.0) for r in node_of[worst])
                         for worst in rising}
            figures = {key: f"+{rise:.0f}" for key, rise in rises.items()
                       if not counter.flag}
            found += self._holds[counter.metric].update(
                frame.time, rising, figures=figures, unseen=_unseen(counter, nodes, silent))
        for counter in COUNTERS:
            if counter not in counters:
                found += self._holds[counter.metric].update(
                    frame.time, {}, unseen=_unseen(counter, nodes, silent))
        self.entries = {rank: tuple(found_here) for rank, found_here in entries.items()}
        self._alarmed = alarmed
        return found

    def _rising(self, counter: Counter, values: Sequence[float],
                entries: dict[int, list[LedgerEntry]]) -> dict[int, str]:
        rising: dict[int, str] = {}
        counting = [(rank, total) for rank, total in enumerate(values) if total > 0]  # NaN: no
        for rank, total in counting:
            then = self._baseline(counter.metric, rank, total)
            rise = total - then if total >= then else total
            # Once past its bar, a counter stays an anomaly while it is still up in the
            # window: a slow rise hovering at the bar must not flicker.
            was = (counter.metric, rank) in self._alarmed
            raised = counter.alarming(LedgerEntry(counter, total, rise)) or (was and rise > 0)
            entry = LedgerEntry(counter, total, rise, raised)
            entries.setdefault(rank, []).append(entry)
            if raised:
                rising[rank] = entry.text()
        return rising

    def _baseline(self, metric: str, rank: int, total: float) -> float:
        """The rank's value of ``metric`` at the window's start, or where it was first known
        in the window (a rank back from the dead does not count its whole past as a rise);
        ``total`` where the window knows none."""
        for snapshot in self._snapshots:
            then = snapshot.value(metric, rank)
            if not is_missing(then):
                return then
        return total

    def _snapshot(self, frame: Frame) -> None:
        """Keep the counters every SNAPSHOT_SECONDS, for the window's span."""
        newest = self._snapshots[-1].time if self._snapshots else None
        if newest is None or frame.time - newest >= SNAPSHOT_SECONDS:
            self._snapshots.append(CounterSnapshot.of(frame))
        while len(self._snapshots) > 1 and frame.time - self._snapshots[1].time >= WINDOW_SECONDS:
            self._snapshots.popleft()

    def seed(self, counters: Mapping[str, Sequence[float]], when: float) -> None:
        """Start from the counters' values per rank at ``when`` (the backend's, before the
        first poll; NaN: not known), as the window's oldest snapshot."""
        series = {c.metric: array("d", counters[c.metric]) for c in COUNTERS
                  if c.metric in counters}
        if series and not self._snapshots:
            answered = array("b", bytes(max(len(values) for values in series.values())))
            self._snapshots.append(CounterSnapshot(when, series, frozenset(), answered))

    def of(self, rank: int) -> tuple[LedgerEntry, ...]:
        return self.entries.get(rank, ())


def silent_gpus(frame: Frame) -> frozenset[int]:
    """The ranks whose GPU answered nothing this poll: neither DCGM's probe nor any error
    counter (``_answered``'s zeros). Worked out once a frame, by its detectors."""
    answered = _answered(frame, [m for m in COUNTER_METRICS if m in frame.values])
    n = max((len(series) for series in frame.values.values()), default=0)
    return frozenset(rank for rank in range(n) if rank >= len(answered) or not answered[rank])


def gpu_unknown(frame: Frame, metric: str, silent: frozenset[int]) -> frozenset[int]:
    """The ranks whose ``metric`` is not known this poll: of the ``silent`` GPUs, those
    without a value of it (a GPU that answered without the metric's series reads 0 on it:
    DCGM leaves a counter out while it is blank)."""
    series = frame.values.get(metric)
    if series is None:
        return silent
    return frozenset(rank for rank in silent if rank >= len(series) or series[rank] != series[rank])


def _unseen(counter: Counter, nodes: Mapping[int, Sequence[int]] | None,
            silent: frozenset[int]) -> frozenset[int]:
    """Where ``counter`` is not known this poll: the ``silent`` GPUs (one answering without
    the counter's series reads 0: it is known). For a per-node counter, the nodes none of
    whose GPUs is known."""
    if counter.per_node and nodes:
        return frozenset(first for first, ranks in nodes.items()
                         if all(rank in silent for rank in ranks))
    return silent


def _by_node(counter: Counter, rising: Mapping[int, str],
             entries: Mapping[int, Sequence[LedgerEntry]],
             nodes: Mapping[int, Sequence[int]]) -> dict[object, str]:
    """The risen ranks of each node as one condition on the rank whose counter rose most:
    the GPU to look at, where the next-anomaly key lands."""
    node_of = {rank: first for first, ranks in nodes.items() for rank in ranks
               if rank in rising}
    grouped: dict[object, str] = {}
    for first in sorted(set(node_of.values())):
        mine = [(rank, _entry(entries, rank, counter)) for rank, node in node_of.items()
                if node == first]
        mine.sort(key=lambda pair: (-pair[1].rise, pair[0]))
        named = ", ".join(f"+{e.rise:.0f} on rank {rank}" for rank, e in mine[:3])
        more = f" and {len(mine) - 3} more" if len(mine) > 3 else ""
        minutes = WINDOW_SECONDS / 60
        grouped[mine[0][0]] = (f"{counter.noun} on {len(mine)} GPU(s) of this node in the "
                               f"last {minutes:.0f} min: {named}{more}: {counter.meaning}")
    return grouped


def _entry(entries: Mapping[int, Sequence[LedgerEntry]], rank: int,
           counter: Counter) -> LedgerEntry:
    return next(e for e in entries[rank] if e.counter is counter)


def ledger_lines(entries: Mapping[int, Sequence[LedgerEntry]], rank: int) -> list[str]:
    """What the rank screen says of a rank's counters: the risen ones, then the quiet."""
    mine = entries.get(rank, ())
    risen = [e.text() for e in mine if e.counter.flag or e.rise > 0]
    quiet = [f"{e.counter.noun} {e.total:.0f}, none new" for e in mine
             if not (e.counter.flag or e.rise > 0)]
    return risen + quiet
