"""Every rank's recent log lines, for hang triage: each file read once, from its end.

``lines_by_rank`` takes the files each rank's logs were found in (``find_logs``) and gives
each rank its newest lines. A file is read backwards from its end, only as far as needed,
and then on into its rotated predecessors (``ranktop.tui.logs.rotation``), newest first, when
it holds too few lines: a log that was just rotated still shows what came before.

A file of one rank (per-rank files) is all that rank's. A file that several ranks list (a
Slurm output, a node's torchrun console, an NCCL debug file per host) is read once and its
lines split per rank by their labels (``ranktop.tui.logs.split``); it is read until every
rank sharing it has ``tail_lines`` lines, or ``SHARED_LINES_PER_RANK`` times that many
lines in all, or ``SHARED_MAX_BYTES`` were read, whichever comes first.

Compressed predecessors (``.gz``) are read too, up to a size (``ranktop.tui.logs.gztail``).

Given a ``ReadBudget`` (hang triage's), the files are read in the order their ranks come in
``files_by_rank`` until its time or its bytes run out, each rank's own file only as far
back as its per-rank share: the ranks not reached are left out of the result.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path

from ..core.model import RankMap
from ..core.outside_file import open_regular
from ..core.text import clean_lines
from .attempts import attempt_number, marker
from .gztail import gz_tail
from .nccl_files import NCCL_SNIFF_BYTES
from .rotation import predecessors, rotated_suffix
from .split import FileRanks, RankIndex

BLOCK = 64 * 1024
MAX_LINE_CHARS = 2000  # longer lines are cut; triage looks at their start
MAX_LINE_BYTES = 16 * 1024  # what one line may cost the read of a rank's own file
SHARED_LINES_PER_RANK = 2  # x tail_lines x ranks sharing a file: where its read stops
SHARED_MAX_BYTES = 64 * 1024 * 1024
Order = tuple[int, float]  # a file's place among a rank's: its attempt, when it was written


@dataclass
class ReadBudget:
    """What one read of many ranks' logs may take: until ``deadline`` (on ``clock``),
    ``max_bytes`` in all, ``rank_bytes`` from each rank's own file (with its predecessors)."""

    deadline: float
    max_bytes: int
    rank_bytes: int
    clock: Callable[[], float] = time.monotonic
    spent: int = 0  # bytes read so far

    def left(self) -> int:
        return max(0, self.max_bytes - self.spent)

    def exhausted(self) -> bool:
        return self.left() <= 0 or self.clock() >= self.deadline


def lines_by_rank(files_by_rank: Mapping[int, Sequence[Path]], rank_map: RankMap,
                  tail_lines: int, budget: ReadBudget | None = None) -> dict[int, list[str]]:
    """Each rank's newest lines, oldest first, made safe to display.

    At most ``tail_lines`` from each of a rank's files (with its predecessors); a rank with
    several files gets their lines one file after the other, the file written to last at
    the end; torchrun's attempts (``ranktop.tui.logs.attempts``) in their order, a marker
    line before each later attempt's lines. Every rank of ``files_by_rank`` is in the
    result, with no lines when its files held none for it or could not be read; with a
    ``budget``, except the ranks one of whose files it ran out before.
    """
    found: dict[int, list[str]] = {}
    for part in batches_by_rank(files_by_rank, rank_map, tail_lines, budget):
        found.update(part)
    return found


def batches_by_rank(files_by_rank: Mapping[int, Sequence[Path]], rank_map: RankMap,
                    tail_lines: int, budget: ReadBudget | None = None, batch: int = 0
                    ) -> Iterator[dict[int, list[str]]]:
    """``lines_by_rank`` in parts of about ``batch`` ranks (0: one part), each rank in the
    part that reads its last file: a caller that is done with a part holds no more of it."""
    owners = _owners(files_by_rank)
    current = frozenset(owners)
    index = RankIndex(rank_map) if any(len(ranks) > 1 for ranks in owners.values()) else None
    found: dict[int, list[tuple[Order, list[bytes]]]] = {rank: [] for rank in files_by_rank}
    files_left = Counter(rank for ranks in owners.values() for rank in ranks)
    ready = [rank for rank in files_by_rank if not files_left[rank]]
    for key, ranks in owners.items():
        if budget is not None and budget.exhausted():
            for rank in ranks:
                found.pop(rank, None)
        else:
            for rank, order, lines in _file_lines(Path(key), ranks, current, index,
                                                  tail_lines, budget):
                if rank in found:
                    found[rank].append((order, lines))
        for rank in ranks:
            files_left[rank] -= 1
            if not files_left[rank] and rank in found:
                ready.append(rank)
        if batch and len(ready) >= batch:
            yield _finish(ready, found)
            ready = []
    yield _finish(ready, found)


def _file_lines(path: Path, ranks: list[int], current: frozenset[str],
                index: RankIndex | None, tail_lines: int, budget: ReadBudget | None
                ) -> Iterator[tuple[int, Order, list[bytes]]]:
    """Each rank's lines from one file (and its predecessors), with its place among the
    rank's files: its attempt (-1 outside any), then when it was written."""
    chain = _chain(path, current)
    if not chain:
        return
    attempt = attempt_number(path)
    order = (-1 if attempt is None else attempt, chain[0][1])
    if len(ranks) == 1:
        yield ranks[0], order, _own_lines(chain, tail_lines, budget)
        return
    for rank, lines in _shared_lines(chain, FileRanks(index, ranks), tail_lines,
                                     budget).items():
        yield rank, order, lines


def _finish(ranks: list[int], found: dict[int, list[tuple[Order, list[bytes]]]]
            ) -> dict[int, list[str]]:
    """These ranks' lines, oldest file first, made safe to display; let go of here."""
    return {rank: clean_lines(_in_turn(found.pop(rank)), MAX_LINE_CHARS)
            for rank in ranks if rank in found}


def _in_turn(files: list[tuple[Order, list[bytes]]]) -> list[bytes]:
    """A rank's files' lines one file after the other, a marker before a later attempt."""
    joined: list[bytes] = []
    attempt = None
    for (number, _), lines in sorted(files, key=itemgetter(0)):
        if attempt is not None and number != attempt and number >= 0:
            joined.append(marker(number).encode())
        attempt = number
        joined.extend(lines)
    return joined


def _owners(files_by_rank: Mapping[int, Sequence[Path]]) -> dict[str, list[int]]:
    """Each distinct file and the ranks that list it, a rank's own predecessors left out."""
    owners: dict[str, list[int]] = {}
    for rank, paths in files_by_rank.items():
        keys = list(dict.fromkeys(os.path.abspath(path) for path in paths))
        listed = set(keys)
        for key in keys:
            # A pattern like rank3.log* lists the predecessors too: they are read as such.
            if not _rotated_copy(key, listed):
                owners.setdefault(key, []).append(rank)
    return owners


def _rotated_copy(key: str, listed: set[str]) -> bool:
    """Whether ``key`` is a rotated copy of another file listed (looked up, not searched
    for: a pattern may list thousands of files for every rank)."""
    head, name = os.path.split(key)
    cuts = [i for i, char in enumerate(name) if char in ".-" and i > 0]
    return any(os.path.join(head, name[:cut]) in listed
               and rotated_suffix(name[:cut], name) is not None for cut in cuts)


def _chain(path: Path, current: frozenset[str]) -> list[tuple[Path, float]]:
    """The file and its predecessors, the one written to last first, with their mtimes."""
    chain = []
    for position, member in enumerate([path, *predecessors(path, exclude=current)]):
        try:
            chain.append((member, os.stat(member).st_mtime, position))
        except OSError:
            continue
    chain.sort(key=lambda item: (-item[1], item[2]))
    return [(member, mtime) for member, mtime, _ in chain]


def _own_lines(chain: list[tuple[Path, float]], tail_lines: int,
               budget: ReadBudget | None) -> list[bytes]:
    """The last ``tail_lines`` lines of a rank's own file and its predecessors."""
    if tail_lines <= 0:
        return []
    lines: list[bytes] = []
    most = tail_lines * MAX_LINE_BYTES
    if budget is not None:
        most = min(most, budget.rank_bytes, budget.left())
    for block in _blocks_back(chain, tail_lines, most, budget=budget):
        lines.extend(block[:tail_lines - len(lines)])
        if len(lines) >= tail_lines:
            break
    return lines[::-1]


def _shared_lines(chain: list[tuple[Path, float]], ranks: FileRanks, tail_lines: int,
                  budget: ReadBudget | None) -> dict[int, list[bytes]]:
    """The last ``tail_lines`` lines of each rank sharing a file, oldest first."""
    lines: dict[int, list[bytes]] = {rank: [] for rank in ranks.owners}
    if tail_lines <= 0:
        return lines
    wanting = len(lines)
    wanted = SHARED_LINES_PER_RANK * tail_lines * len(lines)
    most = SHARED_MAX_BYTES if budget is None else min(SHARED_MAX_BYTES, budget.left())
    for block in _blocks_back(chain, wanted, most, on_head=ranks.learn, budget=budget):
        ranks.learn(b"\n".join(block))
        for line in block:
            rank = ranks.rank_of(line)
            if rank is None:
                continue
            own = lines[rank]
            if len(own) < tail_lines:
                own.append(line)
                wanting -= len(own) == tail_lines
        wanted -= len(block)
        if wanting == 0 or wanted <= 0:
            break
    return {rank: own[::-1] for rank, own in lines.items()}


def _blocks_back(chain: list[tuple[Path, float]], lines: int, max_bytes: int,
                 on_head: Callable[[bytes], None] | None = None,
                 budget: ReadBudget | None = None) -> Iterator[list[bytes]]:
    """The lines of the chain's files, newest first, in blocks; at most ``max_bytes`` read,
    each read counted in ``budget``.

    ``lines``: how many the caller may want, at most (what a compressed file keeps).
    ``on_head`` is given the start of the first file (NCCL_SNIFF_BYTES), where NCCL's init
    lines tell which pid is which rank.
    """
    def spend(size: int) -> None:
        if budget is not None:
            budget.spent += size

    for position, (path, _) in enumerate(chain):
        if max_bytes <= 0:
            return
        if path.name.endswith(".gz"):
            data = gz_tail(path, lines, max_bytes)
            max_bytes -= len(data)
            spend(len(data))
            yield _split_back(data, whole=True)[0]
            continue
        head = on_head if position == 0 else None
        for block, size in _file_back(path, max_bytes, head):
            max_bytes -= size
            spend(size)
            yield block


def _file_back(path: Path, max_bytes: int, on_head: Callable[[bytes], None] | None
               ) -> Iterator[tuple[list[bytes], int]]:
    """A plain file's lines from its end, newest first, block by block, with bytes read."""
    try:
        fd = open_regular(path)  # a FIFO or a device never ends: refused
    except OSError:
        return
    try:
        pos = os.fstat(fd).st_size
        end, carry = pos, b""
        if on_head is not None:
            head = os.pread(fd, min(pos, NCCL_SNIFF_BYTES, max_bytes // 4), 0)  # tail first
            on_head(head)
            max_bytes -= len(head)
            yield [], len(head)  # counted like the rest
        while pos > 0 and end - pos < max_bytes:
            step = min(BLOCK, pos, max_bytes - (end - pos))
            pos -= step
            chunk = os.pread(fd, step, pos) + carry
            block, carry = _split_back(chunk, whole=pos == 0, last=pos + step == end)
            yield block, step
    except OSError:
        return
    finally:
        os.close(fd)


def _split_back(data: bytes, whole: bool, last: bool = True) -> tuple[list[bytes], bytes]:
    """The lines of ``data`` newest first, and the unfinished start when not ``whole``.

    ``last``: ``data`` ends the file, so a final newline ends the last line (no empty line
    after it) and text without one is the line still being written.
    """
    parts = data.split(b"\n")
    if last and parts[-1] == b"":
        parts.pop()
    carry = b"" if whole or not parts else parts.pop(0)
    return parts[::-1], carry
