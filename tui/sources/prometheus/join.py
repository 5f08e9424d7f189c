"""One poll's answers joined to the ranks as each comes in, and what the poll learned.

An answer is read once, into per-rank values (or the job's value, or each rank's newest
sample time), and let go; what stays is a list of floats per metric.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ...core.model import MISSING, QueryTime
from ...settings.config import MetricQuery
from . import promql
from .client import QueryError, Sample, Vector

# DCGM's "blank" sentinels (not supported, not found, ...) are no data, not values.
DCGM_INT_BLANK = float(0x7FFFFFFFFFFFFFF0)  # past DCGM_FP_BLANK: one test finds both
DCGM_FP_BLANK = 140737488355328.0
RankOf = Callable[[Mapping[str, str]], "int | None"]
Answers = dict[str, Vector]  # query key -> what it returned


@dataclass
class Polled:
    """What one poll's answers said, joined: values per metric, the job's values, each rank's
    newest sample time; which queries failed, were not sent, or came back empty; and how
    long each took to answer."""

    values: dict[str, list[float]] = field(default_factory=dict)
    shows: dict[str, str] = field(default_factory=dict)
    ways: dict[str, dict[str, int]] = field(default_factory=dict)  # metric -> way -> GPUs
    job: dict[str, float] = field(default_factory=dict)
    newest: list[float] = field(default_factory=list)  # per stale rank; -inf: not stale
    latest: float = -math.inf  # the newest sample of any rank
    answered: set[str] = field(default_factory=set)
    empty: set[str] = field(default_factory=set)
    failures: list[QueryError] = field(default_factory=list)
    not_sent: int = 0
    partial: dict[str, None] = field(default_factory=dict)  # why answers lack series, once each
    infos: dict[str, None] = field(default_factory=dict)  # the backend's notes, once each
    waited: dict[str, float] = field(default_factory=dict)  # query key -> seconds to answer
    slowest: QueryTime | None = None  # the query whose answer took longest to come

    def took(self, key: str, answer: Vector) -> None:
        """Count ``answer`` as in (what the backend said beside it kept), before it is
        joined."""
        self.answered.add(key)
        if not answer:
            self.empty.add(key)
        self.partial.update(dict.fromkeys(answer.notes.partial))
        self.infos.update(dict.fromkeys(answer.notes.infos))

    def timed(self, key: str, seconds: float, size: int = 0) -> None:
        """Count that ``key``'s answer (``size`` bytes; 0: not known) took ``seconds`` to
        come, answered or failed (on a clock that stood still, as a past moment's does, none
        is the slowest)."""
        self.waited[key] = seconds
        if seconds > (self.slowest.seconds if self.slowest is not None else 0.0):
            self.slowest = QueryTime(key, seconds, size)


def per_rank(answer: Vector, several: bool, n: int, rank_of: RankOf
             ) -> tuple[list[float], dict[str, int]]:
    """The metric's value for each of ``n`` ranks, and how many GPUs each way gave (read
    from each series' way label when the metric has ``several`` ways)."""
    values = [MISSING] * n
    ways: dict[str, int] = {}
    for labels, value in answer.pairs():
        rank = rank_of(labels)
        if rank is None:
            continue
        values[rank] = clean(value)
        if several:
            way = labels.get(promql.WAY_LABEL, "0")
            ways[way] = ways.get(way, 0) + 1
    return values, ways


def fresh_times(answer: Vector, polled: Polled, rank_of: RankOf) -> None:
    """The freshness series of a metric's answer (promql.with_freshness): each stale rank's
    newest sample time, and the newest of all."""
    for labels, value in answer.pairs():
        if labels.get(promql.FRESH_LABEL) == promql.FRESH_NEWEST:
            polled.latest = max(polled.latest, value)
            continue
        rank = rank_of(labels)
        if rank is not None and value > polled.newest[rank]:
            polled.newest[rank] = value


def clean(value: float) -> float:
    """NaN for DCGM's blank sentinels (the integer one is the larger) and for infinities."""
    return value if -math.inf < value < DCGM_FP_BLANK else MISSING


def scalar(samples: Iterable[Sample]) -> float:
    first = next(iter(samples), None)
    return MISSING if first is None else clean(first.value)


def ways_shown(queries: Sequence[MetricQuery], ways: dict[str, int]) -> str:
    """The name of the way most GPUs were read ("+ others" when they differ)."""
    if len(queries) < 2 or not ways:
        return ""
    best = max(ways, key=lambda way: ways[way])
    index = int(best) if best.isdecimal() and int(best) < len(queries) else 0
    return queries[index].shows + (" + others" if len(ways) > 1 else "")
