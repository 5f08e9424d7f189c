"""The dumps of one triage parsed within one time budget for the slow ones.

A hostile dump can take its parser the whole ``ReadBudget.parse_seconds`` (its child is
then killed); eight of them read one after another held the verdict back 160 s. So each
file first gets a short try (``first_seconds``): every readable dump is read before any
slow one takes its full time, and the verdict of the readable ones can be given at once
(``between``). The slow ones then get ``parse_seconds`` each. The time lost to files that
did not parse in the time they were given is bounded by ``total_seconds`` for the whole
read (the readable ones take what they take: 512 dumps of 2,000 entries are seconds of
work): past it, no file is tried any more this time. A slow file that got no whole try
is not tried again until it changes; one not tried at all is tried by the next read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..core.hang.flight import RankDump
from ..core.text import plain

if TYPE_CHECKING:
    from .reader import ReadBudget

Pending = tuple[int, Path, float]  # a rank, its dump file, when the file was written
# Where each file's outcome goes: the rank, its dump or one line, and whether the outcome
# holds until the file changes (not so for a file left untried for want of time).
Settle = Callable[[int, RankDump | str, bool], None]


class Parser(Protocol):
    def read(self, path: Path, rank: int, mtime: float,
             seconds: float | None = None) -> RankDump | str | None: ...


@dataclass
class _Lost:
    """Seconds lost to files that did not parse in time, and how many are left."""

    total: float
    spent: float = 0.0

    @property
    def left(self) -> float:
        return self.total - self.spent


def parse_within(parser: Parser, files: Sequence[Pending], budget: ReadBudget,
                 clock: Callable[[], float], settle: Settle,
                 between: Callable[[Sequence[int]], None] | None = None) -> str:
    """Parse ``files``, each outcome given to ``settle``; ``between`` is told the ranks
    still to be read once the readable dumps are in (only where some are slow). Returns a
    note when the time for slow files ran out ("" otherwise)."""
    lost = _Lost(budget.total_seconds)
    first = min(budget.first_seconds, budget.parse_seconds)
    slow = _round(parser, files, first, budget, lost, clock, settle)
    if slow and between is not None:
        between([rank for rank, _, _ in slow])
    _round(parser, slow, budget.parse_seconds, budget, lost, clock, settle)
    if lost.left <= 0:
        return f"stopped parsing dumps after {budget.total_seconds:g} s lost to slow ones"
    return ""


def _round(parser: Parser, files: Sequence[Pending], seconds: float, budget: ReadBudget,
           lost: _Lost, clock: Callable[[], float], settle: Settle) -> list[Pending]:
    """Each file parsed for at most ``seconds``; the files that took longer, to be tried
    again for longer (none when ``seconds`` is a file's whole time)."""
    slow: list[Pending] = []
    whole = seconds >= budget.parse_seconds
    for index, (rank, path, mtime) in enumerate(files):
        name = plain(path.name)
        if lost.left <= 0:
            _spent(files[index:], budget, settle, tried=whole)
            break
        limit = min(seconds, lost.left)
        started = clock()
        found = parser.read(path, rank, mtime, limit)
        if found is not None:
            settle(rank, found, True)
            continue
        lost.spent += clock() - started
        if not whole and limit == seconds:
            slow.append((rank, path, mtime))
        else:
            settle(rank, f"{name}: not read, parsing took more than {limit:g} s"
                         f"{' (a hostile or broken dump?)' if limit == seconds else ''}",
                   True)
    return slow


def _spent(files: Sequence[Pending], budget: ReadBudget, settle: Settle, tried: bool) -> None:
    """``files`` not read for want of time: those already found slow are not tried again
    until they change; the others are, next time."""
    for rank, path, _ in files:
        why = "slow to parse, and" if tried else "not tried:"
        settle(rank, f"{plain(path.name)}: not read, {why} the {budget.total_seconds:g} s"
                     " for slow dumps were spent", tried)
