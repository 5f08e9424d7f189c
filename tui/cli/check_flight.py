"""`ranktop check-config`'s look at the Flight Recorder pattern: which files it stands for,
how many dumps are there, for which ranks, and how old the newest and the oldest are.

No dump is the usual answer while the job runs (PyTorch writes them when a collective times
out, and a gloo job only when it dumps itself): it is said, never an error."""

from __future__ import annotations

import os
import time
from typing import TextIO

from ..core.moment import ago
from ..core.text import plain
from ..flight.dump_paths import PatternError, find_dumps, patterns_for

ANY_RANK = 1 << 31  # without a rank map, every rank a file names counts
NAMED = 5


def check_flight(pattern: str, world_size: int | None, out: TextIO,
                 now: float | None = None) -> None:
    """Print what ``pattern`` finds among ranks ``range(world_size)`` (any rank: None)."""
    print("\nflight recorder", file=out)
    if not pattern:
        print("  no dumps configured (--flight-recorder PATTERN): hang triage reads none",
              file=out)
        return
    try:
        where = patterns_for(pattern)
        found = find_dumps(pattern, world_size or ANY_RANK)
    except PatternError as error:
        print(f"  cannot look: {plain(str(error))}", file=out)
        return
    print(f"  looked at      {', '.join(plain(p, 400) for p in where)}", file=out)
    if not found:
        print("  no dump found (PyTorch writes them when a collective times out; a gloo job"
              " dumps only itself)", file=out)
        return
    ages = sorted(age for path in found.values() if (age := _age(path, now)) is not None)
    ranks = ", ".join(map(str, list(found)[:NAMED])) + (", ..." if len(found) > NAMED else "")
    total = f" of {world_size:,} ranks" if world_size else ""
    print(f"  found          {len(found):,} dumps{total} (ranks {ranks})", file=out)
    if ages:
        print(f"  written        newest {ago(ages[0])} ago, oldest {ago(ages[-1])} ago",
              file=out)


def _age(path: os.PathLike, now: float | None) -> float | None:
    try:
        written = os.stat(path).st_mtime
    except OSError:  # gone since it was found
        return None
    return max(0.0, (time.time() if now is None else now) - written)
