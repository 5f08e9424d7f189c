"""Every rank's log files, from the user's log spec: for the rank screen's tail, and the
recent lines of every rank for hang triage."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from ranktop.tui.core.model import Rank, RankMap
from ranktop.tui.logs.collect import ReadBudget, batches_by_rank
from ranktop.tui.logs.discovery import find_logs, not_logs
from ranktop.tui.logs.split import local_rank
from ranktop.tui.logs.tail import FileLog

TRIAGE_TAIL_LINES = 200
NOT_CONFIGURED = "no log files configured (--logs PATTERN, or [logs] spec)"


class RankLogs:
    """Where each rank's logs are, as the spec (a pattern or a preset) says."""

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def files(self, rank_map: RankMap, rank: int) -> tuple[list[Path], str]:
        """The rank's log files, newest first, and a note on what was found."""
        if not self.spec:
            return [], NOT_CONFIGURED
        found, local_rank = _placed(rank_map, rank)
        try:
            paths = find_logs(self.spec, found, found.node, local_rank, len(rank_map))
        except (ValueError, OSError) as error:
            return [], f"cannot look for logs: {error}"
        if not paths:
            return [], f"no file matches {self.spec} for rank {rank} ({found.host})"
        folder = paths[0].parent
        names = ", ".join(p.name if p.parent == folder else str(p) for p in paths)
        return paths, f"{names} in {folder}"

    def open(self, rank_map: RankMap, rank: int) -> tuple[list[FileLog], str]:
        paths, note = self.files(rank_map, rank)
        if self.spec and not paths:
            note = self._refused(rank_map, rank) or note
        return [FileLog(path) for path in paths], note

    def _refused(self, rank_map: RankMap, rank: int) -> str:
        """Why the files the spec names are not read (a FIFO, a folder, ...); "" if none is
        there. Only for the rank screen: triage does not look twice at every rank."""
        found, local_rank = _placed(rank_map, rank)
        try:
            refused = not_logs(self.spec, found, found.node, local_rank)
        except (ValueError, OSError):
            return ""
        if not refused:
            return ""
        path, what = refused[0]
        return f"{path.name} in {path.parent}: not a regular file ({what}), not read"

    def triage_lines(self, rank_map: RankMap, order: Sequence[int] | None = None,
                     budget: ReadBudget | None = None) -> dict[int, list[str]]:
        """Each rank's recent lines, oldest first, rotated predecessors included and shared
        files split per rank (blocking). ``order`` and ``budget`` as for ``triage_batches``."""
        found: dict[int, list[str]] = {}
        for part in self.triage_batches(rank_map, order, budget):
            found.update(part)
        return found

    def triage_batches(self, rank_map: RankMap, order: Sequence[int] | None = None,
                       budget: ReadBudget | None = None, batch: int = 0
                       ) -> Iterator[dict[int, list[str]]]:
        """``triage_lines`` in parts of about ``batch`` ranks (0: one part), for hang triage's
        worker, which scans a part and lets it go before the next is read.

        ``order``: the ranks to read, the first first (default: all, by rank). With a
        ``budget``, the ranks it did not reach (files not looked for, or not read) are left
        out.
        """
        ranks = range(len(rank_map)) if order is None else order
        files: dict[int, list[Path]] = {}
        # Files are looked for first (a file several ranks share is then read once, for all
        # of them), in at most half the time left, so that reading starts in any case.
        stop = None if budget is None else (budget.clock() + budget.deadline) / 2
        for rank in ranks:
            if budget is not None and (budget.exhausted() or budget.clock() >= stop):
                break
            files[rank] = self.files(rank_map, rank)[0]
        return batches_by_rank(files, rank_map, TRIAGE_TAIL_LINES, budget, batch)


def _placed(rank_map: RankMap, rank: int) -> tuple[Rank, int]:
    """The rank, and its local rank (its GPU where known)."""
    return rank_map.ranks[rank], local_rank(rank_map, rank)
