"""What a bundle's console must hold beyond its types, checked once it is decoded and before
any screen sees it: a bundle comes from whoever wrote it, and every number in it is taken at
its word by the screens.

- every time (a frame's, an anomaly's since, a history point's...) is finite and between
  ``EARLIEST`` and ``LATEST``;
- every other number is finite (NaN is "no data" and stays), every integer within 2**53;
- every rank named (an anomaly's, the hang's, a saved rank's, a key of a map by rank) is a
  rank of the job: 0 <= rank < the rank map's size;
- the rank map holds together: rank N is the Nth, each rank's node is one of its hosts,
  ``gpus_per_node`` at least 1 and at most 64 (or the job's ranks, where more);
- the arrays agree: ``up`` has one entry per rank, no frame series is longer than the job;
- a severity is one of ``SEVERITIES``; counts are between 0 and ``MAX_RANKS``.

Anything else is a ``SchemaError`` that names the value and what it should be, in one line.
"""

from __future__ import annotations

import dataclasses
import math
from array import array
from collections.abc import Callable, Collection, Mapping
from enum import Enum

from ..core.advice.action import Action
from ..core.analysis import Analysis, Progress
from ..core.anomaly import Anomaly
from ..core.detect.down import DownRank
from ..core.detect.goodput import Goodput
from ..core.detect.hardware import Counter
from ..core.detect.restarts import Restart
from ..core.domain import SEVERITIES
from ..core.hang.checkpoint import Checkpoint
from ..core.hang.flight_triage import FlightVerdict
from ..core.hang.log_gaps import LogGaps
from ..core.hang.triage import HangVerdict
from ..core.history import Point
from ..core.model import Frame, RankMap, SourceStatus
from ..core.moment import JobEnd
from ..core.ranks import MAX_RANKS
from ..engine.snapshot import RankHistory, Snapshot
from .saved import RankSaved, Saved

EARLIEST = 946_684_800.0  # 2000-01-01T00:00:00Z: before any job ranktop watches
LATEST = 4_102_444_800.0  # 2100-01-01T00:00:00Z
WINDOW = "2000-01-01 and 2100-01-01"
GPUS_PER_NODE = 64  # the most the settings take; a rank map learned from labels can say more
TEXT_CHARS = 4000  # a saved log line's, the longest text a bundle holds
MAX_INTEGER = 2**53  # what a float holds exactly: every count and step a screen computes with

# The fields that hold times (a time, or a collection of them; None where optional).
_TIMES: dict[type, tuple[str, ...]] = {
    Saved: ("written",),
    Snapshot: ("at",),
    JobEnd: ("at", "seen"),
    SourceStatus: ("since", "last_ok"),
    Frame: ("time",),
    Anomaly: ("since", "unseen_since"),
    HangVerdict: ("as_of",),
    FlightVerdict: ("written",),
    Progress: ("still_since", "moves"),
    DownRank: ("since", "last_seen", "fault_time"),
    Goodput: ("job_began",),
    Restart: ("died", "resumed"),
    Point: ("time",),
}
# The fields that name ranks: one, a collection, or the keys of a mapping by rank.
_RANKS: dict[type, tuple[str, ...]] = {
    Saved: ("selected", "ranks"),
    RankSaved: ("rank",),
    RankHistory: ("rank",),
    Analysis: ("left_behind", "ledger", "down_ranks"),
    Frame: ("stale", "local", "scrape", "unknown"),
    Anomaly: ("rank",),
    HangVerdict: ("reporting", "silent", "behind", "last_completed", "evidence", "dead",
                  "unread", "awaited", "lagging", "gave_up", "stopped"),
    FlightVerdict: ("culprits", "waiting", "missing_dumps", "unreadable", "evidence"),
    LogGaps: ("no_file", "after_moment"),
    Checkpoint: ("rank",),
    DownRank: ("rank",),
    Restart: ("rank", "together"),
    Action: ("rank",),
}
# The fields that count ranks or members.
_COUNTS: dict[type, tuple[str, ...]] = {
    HangVerdict: ("ranks_read", "ranks_total"),
    FlightVerdict: ("group_size",),
}
_SEVERITIES: dict[type, tuple[str, ...]] = {Anomaly: ("severity",), Counter: ("severity",)}


class SchemaError(ValueError):
    """A value no bundle written by ranktop holds; the text names it and says why."""


def check_saved(saved: Saved) -> bool:
    """SchemaError unless every value of ``saved`` is as the module docstring says; whether
    any of its text holds a control character or is over ``TEXT_CHARS`` (to be cleaned)."""
    analysis = saved.snapshot.analysis
    _check_rank_map(analysis.rank_map)
    world = len(analysis.rank_map)
    if len(analysis.up) not in (0, world):
        raise SchemaError(f"snapshot.analysis.up has {len(analysis.up):,} entries for "
                          f"{world:,} ranks")
    frame = analysis.frame
    for metric, series in (frame.values.items() if frame is not None else ()):
        if len(series) > world:
            raise SchemaError(f"the frame's {metric[:40]!r} has {len(series):,} values for "
                              f"{world:,} ranks")
    if analysis.history is not None:
        raise SchemaError("snapshot.analysis.history is set: a bundle keeps ranks' own")
    for rank, kept in saved.ranks.items():
        if not rank == kept.rank == kept.history.rank:
            raise SchemaError(f"ranks[{rank}] holds rank {kept.rank}'s")
    walk = _Walk(world)
    try:
        walk.value(saved)
    except _Bad as bad:
        raise SchemaError(f"{bad.where()} {bad.said}") from None
    return walk.unclean


def _check_rank_map(rank_map: RankMap) -> None:
    world, hosts = len(rank_map.ranks), len(rank_map.hosts)
    most = max(GPUS_PER_NODE, world)
    if not 1 <= rank_map.gpus_per_node <= most:
        raise SchemaError(f"the rank map's gpus_per_node is {rank_map.gpus_per_node} "
                          f"(from 1 to {most:,})")
    for index, rank in enumerate(rank_map.ranks):
        if rank.rank != index or not 0 <= rank.node < hosts or not -1 <= rank.gpu < MAX_RANKS:
            raise SchemaError(f"the rank map's rank {index} is rank {rank.rank} on node "
                              f"{rank.node} (of {hosts}) GPU {rank.gpu}")


class _Walk:
    """Every value of a bundle, looked at once. Where a value fails, the error is raised
    with its name and each level it passes through adds its own step to the path: nothing
    is spent on paths while all is well. ``unclean``: some text needs ``load`` to clean it."""

    def __init__(self, world: int) -> None:
        self.world = world
        self.unclean = False

    def value(self, value: object) -> None:
        kind = type(value)
        if kind is float:
            if math.isinf(value):  # type: ignore[arg-type]
                raise _Bad(f"is {value}: a number must be finite")
        elif kind is int:
            if abs(value) > MAX_INTEGER:  # type: ignore[arg-type]
                raise _Bad(f"is {value:.3g}: over 2**53")
        elif kind is str:
            if len(value) > TEXT_CHARS or not value.isprintable():  # type: ignore[union-attr]
                self.unclean = True
        elif kind in (bool, bytes, type(None)):
            return
        elif kind is array:
            if any(map(math.isinf, value)):  # type: ignore[call-overload]
                raise _Bad("holds an infinite value")
        elif kind in (tuple, list, frozenset):
            self.items(enumerate(value))  # type: ignore[call-overload]
        elif isinstance(value, Mapping):
            self.items((key, key) for key in value)
            self.items(value.items())
        elif not isinstance(value, Enum):  # an Enum is one of its values: decoding saw to it
            self.fields(value)

    def items(self, pairs) -> None:
        for key, each in pairs:
            try:
                self.value(each)
            except _Bad as bad:
                bad.path.append(f"[{key!r}]")
                raise

    def fields(self, value: object) -> None:
        kind = type(value)
        rules = _RULES.get(kind) or _rules_of(kind)
        for name, check in rules:
            found = getattr(value, name)
            try:
                if check is not None:
                    check(self, found)
                self.value(found)
            except _Bad as bad:
                bad.path.append(f".{name}")
                raise

    def times(self, value: object) -> None:
        for moment in value if isinstance(value, (tuple, list)) else (value,):
            if moment is not None and not EARLIEST <= moment <= LATEST:  # NaN is not either
                raise _Bad(f"is {moment:.6g}: a time must be between {WINDOW}")

    def ranks(self, value: object) -> None:
        if isinstance(value, Mapping):
            value = value.keys()
        elif not isinstance(value, Collection):
            value = (value,)
        for rank in value:
            if rank is not None and not 0 <= rank < self.world:
                raise _Bad(f"names rank {rank}: the job has {self.world:,} ranks")

    def count(self, value: int) -> None:
        if not 0 <= value <= MAX_RANKS:
            raise _Bad(f"is {value}: a count from 0 to {MAX_RANKS:,}")

    def severity(self, value: str) -> None:
        if value not in SEVERITIES:
            raise _Bad(f"is {value[:40]!r}: not one of {', '.join(SEVERITIES)}")


class _Bad(Exception):
    """A value that fails, and the path to it, innermost step first."""

    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said = said
        self.path: list[str] = []

    def where(self) -> str:
        return "".join(reversed(self.path)).lstrip(".") or "the bundle"


_CHECKS = ((_TIMES, _Walk.times), (_RANKS, _Walk.ranks), (_COUNTS, _Walk.count),
           (_SEVERITIES, _Walk.severity))
_RULES: dict[type, tuple[tuple[str, Callable | None], ...]] = {}


def _rules_of(kind: type) -> tuple[tuple[str, Callable | None], ...]:
    """Each field of the dataclass ``kind``, with the check its value gets besides its type's
    (None: only that)."""
    if not dataclasses.is_dataclass(kind):
        raise _Bad(f"is a {kind.__name__}, which no bundle holds")
    rules = []
    for field in dataclasses.fields(kind):
        found = [check for table, check in _CHECKS if field.name in table.get(kind, ())]
        rules.append((field.name, found[0] if found else None))
    _RULES[kind] = tuple(rules)
    return _RULES[kind]
