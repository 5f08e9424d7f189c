"""Every rank's log files, from the user's log spec: for the rank screen's tail, and the
recent lines of every rank for hang triage."""

from __future__ import annotations

from pathlib import Path

from ranktop.tui.core.model import Rank, RankMap
from ranktop.tui.logs.collect import lines_by_rank
from ranktop.tui.logs.discovery import find_logs, not_logs
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

    def triage_lines(self, rank_map: RankMap) -> dict[int, list[str]]:
        """Each rank's recent lines, oldest first, rotated predecessors included and shared
        files split per rank (blocking: the poll worker calls it)."""
        files = {rank: self.files(rank_map, rank)[0] for rank in range(len(rank_map))}
        return lines_by_rank(files, rank_map, TRIAGE_TAIL_LINES)


def _placed(rank_map: RankMap, rank: int) -> tuple[Rank, int]:
    """The rank, and its local rank (its GPU where known)."""
    found = rank_map.ranks[rank]
    return found, found.gpu if found.gpu >= 0 else rank % rank_map.gpus_per_node
