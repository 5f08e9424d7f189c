"""The dumps of one triage parsed within one time budget for all of them.

A hostile dump can take its parser the whole ``ReadBudget.parse_seconds`` (its child is
then killed); eight of them read one after another held the verdict back 160 s. So each
file first gets a short try (``first_seconds``): every readable dump is read before any
slow one takes its full time, and the verdict of the readable ones can be given at once
(``between``). The slow ones then get ``parse_seconds`` each, as long as the budget for all
of them (``total_seconds``) lasts; those it does not reach are not read this time, and said.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ranktop.tui.core.flight import RankDump
from ranktop.tui.core.text import plain

if TYPE_CHECKING:
    from ranktop.tui.flight.reader import ReadBudget

Pending = tuple[int, Path, float]  # a rank, its dump file, when the file was written
# Where each file's outcome goes: the rank, its dump or one line, and whether the outcome
# holds until the file changes (not so for a file left unread for want of time).
Settle = Callable[[int, RankDump | str, bool], None]


class Parser(Protocol):
    def read(self, path: Path, rank: int, mtime: float,
             seconds: float | None = None) -> RankDump | str | None: ...


def parse_within(parser: Parser, files: Sequence[Pending], budget: ReadBudget,
                 clock: Callable[[], float], settle: Settle,
                 between: Callable[[Sequence[int]], None] | None = None) -> str:
    """Parse ``files`` within ``budget.total_seconds``, each outcome given to ``settle``;
    ``between`` is told the ranks still to be read once the readable dumps are in (only
    where some are). Returns a note when the time ran out ("" otherwise)."""
    deadline = clock() + budget.total_seconds
    first = min(budget.first_seconds, budget.parse_seconds)
    slow, ran_out = _round(parser, files, first, budget, deadline, clock, settle)
    if slow and between is not None:
        between([rank for rank, _, _ in slow])
    _, late = _round(parser, slow, budget.parse_seconds, budget, deadline, clock, settle)
    if ran_out or late:
        return f"stopped parsing dumps after {budget.total_seconds:g} s (the budget)"
    return ""


def _round(parser: Parser, files: Sequence[Pending], seconds: float, budget: ReadBudget,
           deadline: float, clock: Callable[[], float], settle: Settle
           ) -> tuple[list[Pending], bool]:
    """Each file parsed for at most ``seconds``; the files that took longer, to be tried
    again for longer (none when ``seconds`` is a file's whole time), and whether the time
    for all of them ran out."""
    slow: list[Pending] = []
    ran_out = False
    for rank, path, mtime in files:
        left = deadline - clock()
        name = plain(path.name)
        if left <= 0:
            ran_out = True
            settle(rank, f"{name}: not read, the {budget.total_seconds:g} s for all dumps"
                         " were spent", False)
            continue
        limit = min(seconds, left)
        found = parser.read(path, rank, mtime, limit)
        if found is not None:
            settle(rank, found, True)
        elif seconds < budget.parse_seconds and limit == seconds:
            slow.append((rank, path, mtime))
        else:
            whole = limit >= budget.parse_seconds  # cut short by the deadline: not its fault
            settle(rank, f"{name}: not read, parsing took more than {limit:g} s"
                         + (" (a hostile or broken dump?)" if whole else ""), whole)
    return slow, ran_out
