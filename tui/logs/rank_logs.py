"""Every rank's log files, from the user's log spec: for the rank screen's tail, and the
recent lines of every rank for hang triage."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ..core.model import Rank, RankMap
from .attempts import attempt_number
from .collect import ReadBudget, batches_by_rank
from .discovery import find_logs, looked_in, nccl_files, not_logs, preset_name
from .found_files import FoundFiles
from .merged import MergedLog
from .nccl_files import NcclFiles, Sniffs
from .split import local_rank
from .tail import FileLog

TRIAGE_TAIL_LINES = 200
NOT_CONFIGURED = "no log files configured (--logs PATTERN, or [logs] spec)"


class RankLogs:
    """Where each rank's logs are, as the spec (a pattern or a preset) says."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self._sniffs = Sniffs()  # what was read of the nccl: preset's files, kept
        self._restarts_anew = preset_name(spec) == "torchrun"
        self._kept = FoundFiles()  # triage's finds, kept while their folders are unchanged

    def files(self, rank_map: RankMap, rank: int, explain: bool = True
              ) -> tuple[list[Path], str]:
        """The rank's log files, newest first, and a note on what was found; ``explain``:
        say where the torchrun preset looked when it found none (hang triage does not)."""
        if not self.spec:
            return [], NOT_CONFIGURED
        try:
            weighed = nccl_files(self.spec, rank_map, self._sniffs, rank_map.ranks[rank])
        except (ValueError, OSError) as error:
            return [], f"cannot look for logs: {error}"
        return self._found(rank_map, rank, weighed, explain)

    def _found(self, rank_map: RankMap, rank: int, weighed: NcclFiles | None,
               explain: bool) -> tuple[list[Path], str]:
        """The rank's files, from the nccl: preset's files weighed at once when given."""
        found, local_rank = _placed(rank_map, rank)
        why = ""
        try:
            if weighed is None:
                paths = find_logs(self.spec, found, found.node, local_rank, len(rank_map),
                                  rank_map.hosts)
            else:
                paths, why = weighed.of(rank)
            if not paths and not why and explain:
                why = looked_in(self.spec, found, found.node, local_rank, rank_map.hosts)
        except (ValueError, OSError) as error:
            return [], f"cannot look for logs: {error}"
        if not paths:
            return [], (f"no file found for rank {rank} ({found.host}) with {self.spec}"
                        + (f"; {why}" if why else ""))
        return paths, _where(paths)

    def open(self, rank_map: RankMap, rank: int) -> tuple[list[MergedLog], str]:
        """The rank's files as one log in time order (none when none is found), and a note
        on what was found."""
        paths, note = self.files(rank_map, rank)
        if self.spec and not paths:
            note = self._refused(rank_map, rank) or note
        if not paths:
            return [], note
        # torchrun makes a new attempt's files on a restart: looked for while followed.
        refind = ((lambda: self.files(rank_map, rank, explain=False)[0])
                  if self._restarts_anew else None)
        return [MergedLog([FileLog(path) for path in paths], refind)], note

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
            found.update((rank, lines or []) for rank, lines in part.items())
        return found

    def triage_batches(self, rank_map: RankMap, order: Sequence[int] | None = None,
                       budget: ReadBudget | None = None, batch: int = 0
                       ) -> Iterator[dict[int, list[str] | None]]:
        """``triage_lines`` in parts of about ``batch`` ranks (0: one part), for hang triage's
        worker, which scans a part and lets it go before the next is read; the ranks for
        which no file was found come first, with None for lines.

        ``order``: the ranks to read, the first first (default: all, by rank). With a
        ``budget``, the ranks it did not reach (files not looked for, or not read) are left
        out.
        """
        ranks = range(len(rank_map)) if order is None else order
        files: dict[int, list[Path]] = {}
        # Files are looked for first (a file several ranks share is then read once, for all
        # of them), in at most half the time left, so that reading starts in any case.
        stop = None if budget is None else (budget.clock() + budget.deadline) / 2
        find = self._finder(rank_map)
        for rank in ranks:
            if budget is not None and (budget.exhausted() or budget.clock() >= stop):
                break
            files[rank] = find(rank)
        unfound = {rank: None for rank, paths in files.items() if not paths}
        if unfound:
            yield unfound
        yield from batches_by_rank({rank: paths for rank, paths in files.items() if paths},
                                   rank_map, TRIAGE_TAIL_LINES, budget, batch)

    def _finder(self, rank_map: RankMap) -> Callable[[int], list[Path]]:
        """Each rank's files: the nccl: preset's weighed once for every rank, the others
        looked for rank by rank (and kept: ``FoundFiles``)."""
        try:
            weighed = nccl_files(self.spec, rank_map, self._sniffs)
        except (ValueError, OSError):
            weighed = None
        if weighed is None:
            return self._kept.finder(
                rank_map, lambda rank: self.files(rank_map, rank, explain=False)[0])
        self._sniffs.forget_all_but(f.path for f in weighed.files)
        return lambda rank: weighed.of(rank)[0]


def _where(paths: list[Path]) -> str:
    """Where a rank's files are: the first one's folder, and the earlier attempts'."""
    folder = paths[0].parent
    earlier = [p for p in paths if p.parent != folder and attempt_number(p) is not None]
    names = ", ".join(p.name if p.parent == folder else str(p)
                      for p in paths if p not in earlier)
    attempts = sorted({p.parents[1].name for p in earlier})
    return f"{names} in {folder}" + (f"; also {', '.join(attempts)}" if attempts else "")


def _placed(rank_map: RankMap, rank: int) -> tuple[Rank, int]:
    """The rank, and its local rank (its GPU where known)."""
    return rank_map.ranks[rank], local_rank(rank_map, rank)
