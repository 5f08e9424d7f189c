"""Plain data shared by every part of ranktop: ranks, frames of values, source health.

Nothing here imports Textual. A Frame is one poll's values of every metric for every
rank; a value that is absent is NaN ("no data"), never 0. The analysis takes a frame's
values ``bounded``: within what a 32-bit float holds, as they cross to the UI, and never
infinite (no number is no data), so that nothing downstream meets an infinity.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

MISSING = math.nan
SHOWN_HOST_CHARS = 256  # a host is cut to this on screen only: it is whole in the map
FLOAT32_MAX = 3.4028234663852886e38  # the largest finite 32-bit float
MAX_COUNT = 2.0**53  # past it a float no longer counts one by one


def is_missing(value: float) -> bool:
    """True when a value is "no data" (NaN)."""
    return value != value


def bounded_value(value: float) -> float:
    """``value`` clamped to a 32-bit float's finite range; NaN for an infinity."""
    try:
        value = float(value)
    except OverflowError:  # an integer of hundreds of digits
        return FLOAT32_MAX if value > 0 else -FLOAT32_MAX
    if math.isinf(value):
        return MISSING
    return min(max(value, -FLOAT32_MAX), FLOAT32_MAX) if value == value else value


def as_count(value: float) -> float:
    """``value`` as a count of steps reads it: NaN unless within 0..``MAX_COUNT`` (a hostile
    series would make every step lost or gained, past what an integer field holds)."""
    return value if 0 <= value <= MAX_COUNT else MISSING


_INFINITY = array("f", [math.inf]).tobytes()
_MINUS_INFINITY = array("f", [-math.inf]).tobytes()


def bounded(values: Sequence[float]) -> Sequence[float]:
    """``values`` themselves when each is NaN or a 32-bit float's finite range holds it (as
    nearly always), else a list of them ``bounded_value``."""
    try:
        packed = array("f", values).tobytes()  # a value past the range: an infinity here
    except OverflowError:
        packed = _INFINITY
    # a byte search, not a float comparison per value; a match across two values only
    # costs the exact pass, whose values come out the same
    if _INFINITY in packed or _MINUS_INFINITY in packed:
        return [bounded_value(value) for value in values]
    return values


@dataclass(frozen=True)
class Rank:
    """One training rank and the GPU it runs on."""

    rank: int
    host: str
    gpu: int
    node: int
    uuid: str = ""
    inferred: bool = False  # never seen: its place is inferred from its neighbours
    pod: str = ""  # on Kubernetes, the pod it runs in ("" where not known)
    # Whether GPU data (DCGM, NVML) has named its GPU: where none has (a CPU job, GPUs
    # nobody exports), ``gpu`` is only the local rank the job's labels give.
    gpu_named: bool = True

    @property
    def place(self) -> str:
        """Where the rank runs, as every screen names it: "gpu-node-004 GPU 5", and on
        Kubernetes "gpu-node-004 GPU 5 pod llama-worker-4" (node and pod); "node-a local
        rank 1" where no GPU data named its GPU."""
        host = self.host if self.host and self.host != "?" else "host unknown"
        if len(host) > SHOWN_HOST_CHARS:
            host = host[:SHOWN_HOST_CHARS - 1] + "…"
        device = "GPU" if self.gpu_named else "local rank"
        where = f"{host} {device} {self.gpu}" if self.gpu >= 0 else f"{host}, {device} unknown"
        if self.pod and self.pod != self.host:
            where = f"{where} pod {self.pod}"
        return f"{where}, inferred" if self.inferred else where

    @property
    def title(self) -> str:
        """The rank and its place: "rank 37 (gpu-node-004 GPU 5)"."""
        return f"rank {self.rank} ({self.place})"


@dataclass(frozen=True)
class RankMap:
    """Every rank of the job, in rank order, and how that order was learned."""

    ranks: tuple[Rank, ...]
    hosts: tuple[str, ...]
    gpus_per_node: int
    source: str
    left_out: str = ""  # what the labels it was last learned from held and it left out

    @classmethod
    def grid(cls, hosts: Sequence[str], gpus_per_node: int, source: str) -> RankMap:
        """Ranks laid out host by host, GPU by GPU (torchrun's default order)."""
        ranks = tuple(
            Rank(rank=n * gpus_per_node + g, host=host, gpu=g, node=n)
            for n, host in enumerate(hosts)
            for g in range(gpus_per_node)
        )
        return cls(ranks=ranks, hosts=tuple(hosts), gpus_per_node=gpus_per_node, source=source)

    def __len__(self) -> int:
        return len(self.ranks)

    def find(self, query: str) -> Rank | None:
        """The rank a user typed: a rank number, a host name, or host:gpu."""
        query = query.strip()
        if not query:
            return None
        if query.isdecimal():
            number = int(query)
            return self.ranks[number] if number < len(self.ranks) else None
        host, _, gpu = query.partition(":")
        matches = [r for r in self.ranks if r.host == host] or [
            r for r in self.ranks if host.lower() in r.host.lower()
        ]
        if gpu.isdecimal():
            matches = [r for r in matches if r.gpu == int(gpu)]
        return matches[0] if matches else None


@dataclass(frozen=True)
class Frame:
    """One poll: per-rank values of each metric, plus job-level values.

    ``values[metric][rank]`` is NaN where there is no data. A metric that is not in
    ``values`` at all is not exported by the source; ``absent`` says why, where known.
    """

    time: float
    values: Mapping[str, Sequence[float]]
    job: Mapping[str, float] = field(default_factory=dict)
    stale: frozenset[int] = frozenset()  # ranks whose newest sample is too old to trust
    shows: Mapping[str, str] = field(default_factory=dict)  # metric -> which query it shows
    local: frozenset[int] = frozenset()  # ranks whose values came from this node's NVML
    absent: Mapping[str, str] = field(default_factory=dict)  # metric -> why it has no values
    # metrics whose query went unanswered this poll (failed, not sent): their values, if
    # any, are the last poll's; where there are none, nothing is known of them
    unanswered: frozenset[str] = frozenset()
    # ranks down whose scrape the backend says fails, and what that says of the process
    # ("scrape timing out: alive but frozen?"): a live poll's only
    scrape: Mapping[int, str] = field(default_factory=dict)
    # ranks not answered: the backend's answer was partial (a shard or a store did not
    # answer) and held none of their series. Not known, not gone: no verdict is started
    # from their absence, and what was known of them holds.
    unknown: frozenset[int] = frozenset()

    def value(self, metric: str, rank: int) -> float:
        series = self.values.get(metric)
        if series is None or rank >= len(series):
            return MISSING
        return series[rank]

    def without(self, metrics: Sequence[str], n_ranks: int) -> frozenset[int]:
        """The ranks with no value of any of ``metrics`` this poll: a gap in their data
        (a failed scrape, a partial answer), not a sign that what they showed is gone.
        A metric not in the frame at all has no value on any rank."""
        lacking = set(range(n_ranks))
        for metric in metrics:
            series = self.values.get(metric)
            if series is None:
                continue
            lacking = {rank for rank in lacking
                       if rank >= len(series) or series[rank] != series[rank]}
        return frozenset(lacking)

    def bounded(self) -> Frame:
        """The frame with every value ``bounded`` (itself when each already is)."""
        values = {metric: bounded(series) for metric, series in self.values.items()}
        job = list(self.job.values())
        job_bounded = bounded(job)
        if job_bounded is job and all(values[m] is self.values[m] for m in values):
            return self
        return replace(self, values=values, job=dict(zip(self.job, job_bounded, strict=True)))

    def ranks_up(self, n_ranks: int) -> list[bool]:
        """For each rank, whether any metric has a value for it."""
        up = [False] * n_ranks
        for series in self.values.values():
            part = series[:n_ranks]
            up[:len(part)] = [known or value == value
                              for known, value in zip(up, part, strict=False)]
            if all(up):  # as nearly always after the first metric: the others cannot add
                break
        return up


class Health(Enum):
    OK = "ok"
    SLOW = "slow"
    STALE = "stale"
    ERROR = "error"


@dataclass(frozen=True)
class QueryTime:
    """One of a poll's queries: what it asked for, how long its answer took to come, and
    how big it was."""

    key: str  # as the source names it: "metric:sm_active", "job:step"
    seconds: float
    size: int = 0  # the answer's bytes, inflated (0: not known)

    @property
    def asked_for(self) -> str:
        """What the query asked for, in the words the screens use: a metric's id
        ("sm_active"), a job value's name ("the job's step")."""
        kind, _, name = self.key.partition(":")
        if not name:
            return self.key
        return name if kind == "metric" else f"the {kind}'s {name}"


@dataclass(frozen=True)
class SourceStatus:
    """What a source can say about itself after a poll."""

    name: str
    health: Health
    since: float
    message: str = ""
    last_ok: float | None = None
    detail: str = ""  # e.g. where the rank map came from and how many ranks matched
    poll_seconds: float = 0.0  # how long the last poll took
    sample_interval: float = 0.0  # about how often the source's data is sampled (0: unknown)
    partial: tuple[str, ...] = ()  # why the backend's answers lack series; (): they are whole
    infos: tuple[str, ...] = ()  # the backend's notes on its answers (Prometheus 3's infos)
    slowest: QueryTime | None = None  # the last poll's slowest query (None: not timed)
