"""Each rank's log files as last found, kept while the folders they were found in stay as
they were: hang triage reads every rank's logs on each run, and a replay runs it for
every moment it replays, so looking for 512 ranks' files again each time (a torchrun
tree globbed rank by rank) cost more than reading them.

A folder's modification time changes when a file or folder is made or removed in it: a
new attempt's folder in a run folder, a new run folder in a node's log dir, a rank's new
``stderr.log`` in its folder, a rotated file beside the one found. The folders of every
file found, and the ``WATCHED_LEVELS`` above them, are watched that way; any change, a
new rank map, or ``REFIND_SECONDS`` since the last full look, and every rank's files are
looked for again. A rank for which nothing was found is looked for on every call (its
files may appear in a folder no found file told of).

Several triage workers may look at once (the live one, replayed moments'): one lock
guards what is kept; the looking itself is done outside it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..core.model import RankMap

# A change the watched folders cannot show (a file appearing where no found file told of,
# or a network file system's late times) is seen within this long.
REFIND_SECONDS = 60.0
WATCHED_LEVELS = 4  # a file's folder and those above it: torchrun's rank, attempt, run, node
Find = Callable[[int], list[Path]]


class FoundFiles:
    """The files ``find`` gave each rank, kept while they are still what it would give."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._rank_map: RankMap | None = None
        self._found: dict[int, list[Path]] = {}
        self._folders: dict[str, int] = {}  # folder -> its modification time (ns) when watched
        self._since = -float("inf")  # when every rank was last looked for anew
        self._lock = threading.Lock()

    def finder(self, rank_map: RankMap, find: Find) -> Find:
        """``find`` for the ranks of ``rank_map``, answered from what was found before
        where nothing it was found in has changed since."""
        with self._lock:
            if not self._still_good(rank_map):
                self._forget(rank_map)
        return self._cached(find)

    def _cached(self, find: Find) -> Find:
        def cached(rank: int) -> list[Path]:
            with self._lock:
                kept = self._found.get(rank)
            if kept is not None:
                return list(kept)
            paths = find(rank)
            if paths:
                with self._lock:
                    self._found[rank] = list(paths)
                    self._watch(paths)
            return paths
        return cached

    def _still_good(self, rank_map: RankMap) -> bool:
        if self._rank_map is None or self._clock() - self._since >= REFIND_SECONDS:
            return False
        if rank_map is not self._rank_map and rank_map != self._rank_map:
            return False
        return all(_modified_ns(folder) == then for folder, then in self._folders.items())

    def _forget(self, rank_map: RankMap) -> None:
        self._rank_map, self._since = rank_map, self._clock()
        self._found, self._folders = {}, {}

    def _watch(self, paths: list[Path]) -> None:
        for path in paths:
            for folder in path.parents[:WATCHED_LEVELS]:
                key = str(folder)
                if key not in self._folders:
                    self._folders[key] = _modified_ns(key)


def _modified_ns(folder: str) -> int:
    """The folder's modification time in nanoseconds; -1 when it cannot be read (gone):
    a folder that comes back then counts as changed."""
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return -1
