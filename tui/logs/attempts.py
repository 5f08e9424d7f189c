"""A rank's log files of several torchrun attempts, told apart.

torchrun restarts a job's workers in a new ``attempt_<K>`` folder
(``ranktop.tui.logs.torchrun_tree``), so a rank's log after a restart is its old process's
files, then the new one's. The lines of one attempt are merged by their stamps
(``ranktop.tui.logs.merged``); attempts follow one another in their order, a marker line
between them. Hang triage ignores what comes before the marker, as it does what comes
before an NCCL re-init (``ranktop.tui.core.hang.scan``); checkpoint lines count wherever
they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ..core.hang.scan import NEW_ATTEMPT

_ATTEMPT = re.compile(r"attempt_(\d{1,9})")


def attempt_number(path: Path) -> int | None:
    """K of a file in ``.../attempt_<K>/<local_rank>/``, or None for a file elsewhere."""
    found = _ATTEMPT.fullmatch(path.parent.parent.name)
    return int(found.group(1)) if found else None


def attempt_groups(paths: Sequence[Path]) -> list[tuple[int | None, list[int]]]:
    """The indices of ``paths`` by attempt, the oldest attempt first, each with its number;
    one group of all (numbered None) unless they come from two attempts or more. A file of
    no attempt comes before every attempt."""
    numbers = [attempt_number(path) for path in paths]
    if len({number for number in numbers if number is not None}) < 2:
        return [(None, list(range(len(paths))))] if paths else []
    groups: dict[int, list[int]] = {}
    for index, number in enumerate(numbers):
        groups.setdefault(-1 if number is None else number, []).append(index)
    return [(None if number < 0 else number, groups[number]) for number in sorted(groups)]


def marker(attempt: int | None) -> str:
    """The line put before an attempt's lines."""
    return f"{NEW_ATTEMPT}{attempt}, torchrun restarted the workers ──"


def without_next_attempt(lines: list[str]) -> list[str]:
    """``lines`` cut at a past moment, without the markers at their end: a marker belongs to
    the attempt it opens, and an attempt none of whose lines was written by then had not
    begun (kept, its marker would hide the hang the old attempt ended in)."""
    end = len(lines)
    while end and lines[end - 1].startswith(NEW_ATTEMPT):
        end -= 1
    return lines[:end]
