"""Which rank each file of an ``nccl:`` spec belongs to, on evidence only.

``NCCL_DEBUG_FILE=nccl.%h.%p.log`` makes one file a process. A file is a rank's only when
something shows it:

1. its NCCL init line names the rank in a communicator of the job's size (data-contracts
   §3.2);
2. its lines carry the rank's own label (``[rankN]:``, or old PyTorch's ``[Rank N]`` after its
   header: ``ranktop.tui.logs.split.global_label``);
3. its host (the host its NCCL lines start with, else a host of the job named in its path)
   and the CUDA device its NCCL lines carry are the rank's host and local rank, as the rank
   map places it, and the device can be trusted there: not when an init line shows a device
   that is not its rank's local rank, nor when every file of the host shows one device (one
   GPU a process, under ``CUDA_VISIBLE_DEVICES``).

Each file's start (``NCCL_SNIFF_BYTES``) is read, and, while it names no rank, the starts of
its rotated predecessors, newest first: logrotate moves the init lines there. A file that
shows nothing of the kind is no rank's, whatever its device: the rank is told that no file
was found, and why (how many files named no rank), never shown another rank's file. When
several files show one rank (a restart writes a new pid's file), the newest is kept.

What was read of a file is kept (``Sniffs``) while its size, inode and modification time
stay the same, so a hung job's files are read once, not at every triage.
"""

from __future__ import annotations

import os
import re
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..core.model import Rank, RankMap
from ..core.outside_file import open_regular
from .rotation import predecessors
from .split import NCCL_INIT, global_label, local_rank, short_host

NCCL_SNIFF_BYTES = 256 * 1024
# An NCCL line's prefix (data-contracts §3.1): its host and the CUDA device.
_NCCL_LINE = re.compile(rb"(?m)^(?:\[[^\]\n]*\] )?([^:\s\[\]]+):\d+:\d+ \[(\d{1,18})\] "
                        rb"(?:[\d.]+ )?(?:\S+:\d+ (?:\([^)]*\) )?)?NCCL (?:INFO|WARN|TRACE)\b")
# Lines that may carry a rank's own label: looked at one by one, the first few only.
_LABELLED = re.compile(rb"(?m)^[^\n]*?(?:\[rank\d|Rank \d)[^\n]*")
LABELLED_LINES = 16
_PATH_WORD = re.compile(r"[/._]+")
_NCCL_FIELD = re.compile(r"%([hp%])")


def nccl_glob(pattern: str, host: str) -> str:
    """An NCCL_DEBUG_FILE pattern as a glob: %h the host given (a glob itself), %p any pid."""
    return _NCCL_FIELD.sub(lambda m: {"h": host, "p": "*", "%": "%"}[m.group(1)], pattern)


@dataclass(frozen=True)
class Job:
    """What a file's evidence is weighed against: the job's size and where its ranks run
    (rank -> short host and local rank; only some ranks' places may be known)."""

    world_size: int
    places: Mapping[int, tuple[str, int]]

    @classmethod
    def of(cls, rank_map: RankMap) -> Job:
        return cls(len(rank_map), {r.rank: (short_host(r.host), local_rank(rank_map, r.rank))
                                   for r in rank_map.ranks})

    @classmethod
    def one(cls, rank: Rank, local: int, world_size: int) -> Job:
        """Only one rank's place known (discovery for a single rank)."""
        return cls(world_size, {rank.rank: (short_host(rank.host), local)})


@dataclass(frozen=True)
class Sniffed:
    """What a file's start (and its predecessors') shows about who wrote it."""

    path: Path
    mtime: float
    rank: int | None = None  # the rank its init line or its own labels name
    host: str = ""  # the short host of its NCCL lines, else of its path; "" unknown
    device: int | None = None  # the CUDA device its NCCL lines carry
    device_off: bool = False  # its init line shows a device other than its rank's local rank
    several: bool = False  # it names more than one rank: no one process's file


@dataclass
class Sniffs:
    """What was read of each file, kept while the file stays the same (shared by the rank
    screen and hang triage's thread)."""

    kept: dict[str, tuple[tuple[int, int, int], Sniffed]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of(self, path: Path, job: Job, hosts: frozenset[str]) -> Sniffed | None:
        """The file's evidence, or None when it cannot be read."""
        try:
            stat = os.stat(path)
        except OSError:
            return None
        key = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        with self.lock:
            kept = self.kept.get(str(path))
        if kept is not None and kept[0] == key:
            return kept[1]
        found = _sniff(path, stat.st_mtime, job, hosts)
        with self.lock:
            self.kept[str(path)] = (key, found)
        return found

    def forget_all_but(self, paths: Iterable[Path]) -> None:
        keep = {str(path) for path in paths}
        with self.lock:
            for name in [name for name in self.kept if name not in keep]:
                del self.kept[name]


class NcclFiles:
    """The files of an ``nccl:`` spec and the rank each one is shown to be."""

    def __init__(self, candidates: list[Path], job: Job, sniffs: Sniffs | None = None) -> None:
        self.job = job
        hosts = frozenset(host for host, _ in job.places.values())
        sniffs = sniffs if sniffs is not None else Sniffs()
        found = [sniffs.of(path, job, hosts) for path in candidates]
        self.files = [f for f in found if f is not None]
        self.by_rank: dict[int, list[Sniffed]] = defaultdict(list)
        self._by_place: dict[tuple[str, int], list[Sniffed]] = defaultdict(list)
        self._unclaimed: list[Sniffed] = []
        self._sort()

    def of(self, rank: int) -> tuple[list[Path], str]:
        """The rank's file (the newest that shows it), or none and why."""
        own = self.by_rank.get(rank)
        if own:
            return [own[0].path], ""
        place = self.job.places.get(rank)
        if place is not None and place in self._by_place:
            return [self._by_place[place][0].path], ""
        return [], self._why_none(place)

    def _sort(self) -> None:
        files, places = self.files, self.job.places
        untrusted = {places[f.rank][0] for f in files
                     if f.device_off and f.rank in places} | self._one_device_hosts()
        by_place = {(host, local): rank for rank, (host, local) in places.items()}
        for sniffed in sorted(files, key=lambda f: (-f.mtime, str(f.path))):
            if sniffed.rank is not None and not sniffed.several:
                self.by_rank[sniffed.rank].append(sniffed)
            elif (sniffed.host and sniffed.host not in untrusted and sniffed.device is not None
                  and not sniffed.several
                  and (sniffed.host, sniffed.device) in by_place):
                self._by_place[sniffed.host, sniffed.device].append(sniffed)
            else:
                self._unclaimed.append(sniffed)

    def _one_device_hosts(self) -> set[str]:
        """Hosts with several ranks whose files, when there are several, all show one
        device: the device there is no local rank."""
        devices: dict[str, set[int]] = defaultdict(set)
        counts: dict[str, int] = defaultdict(int)
        for sniffed in self.files:
            if sniffed.host and sniffed.device is not None:
                devices[sniffed.host].add(sniffed.device)
                counts[sniffed.host] += 1
        ranks_on = defaultdict(int)
        for host, _ in self.job.places.values():
            ranks_on[host] += 1
        return {host for host, seen in devices.items()
                if len(seen) == 1 and counts[host] > 1 and ranks_on[host] > 1}

    def _why_none(self, place: tuple[str, int] | None) -> str:
        host = place[0] if place else ""
        mine = [f for f in self._unclaimed if not f.host or f.host == host]
        if not mine:
            return ""
        shown = mine[0].path.name
        count = f"{len(mine)} file{'s' if len(mine) != 1 else ''}"
        where = f" of {host}" if host and all(f.host == host for f in mine) else ""
        return (f"{count}{where} name no rank (e.g. {shown}: no NCCL init line, no [rankN] "
                "label, no device that tells): not shown as this rank's")


def _sniff(path: Path, mtime: float, job: Job, hosts: frozenset[str]) -> Sniffed:
    """Read the file's start, then its predecessors', until one names a rank."""
    found = Sniffed(path, mtime, host=_host_in_path(path, hosts))
    for member in [path, *predecessors(path)]:
        if member.name.endswith(".gz"):
            continue
        found = _weigh(found, _head(member), job)
        if found.rank is not None:
            break
    return found


def _weigh(found: Sniffed, head: bytes, job: Job) -> Sniffed:
    """``found`` with what ``head`` adds (what was found first stays)."""
    rank, device_off = found.rank, found.device_off
    for init in NCCL_INIT.finditer(head):
        named, size, device = (int(init.group(i)) for i in (1, 2, 3))
        if size == job.world_size or job.world_size <= 0:
            rank = named if rank is None else rank
            place = job.places.get(named)
            device_off = device_off or (place is not None and place[1] != device)
            break
    labels = _labels(head)
    several = found.several or len(labels) > 1 or (rank is not None and bool(labels - {rank}))
    if rank is None and len(labels) == 1:
        rank = next(iter(labels))
    host, device = found.host, found.device
    line = _NCCL_LINE.search(head)
    if line is not None and device is None:
        host, device = line.group(1).decode("utf-8", "replace"), int(line.group(2))
    return Sniffed(found.path, found.mtime, rank, host, device, device_off, several)


def _labels(head: bytes) -> set[int]:
    """The ranks the first labelled lines of ``head`` name."""
    named: set[int] = set()
    for count, match in enumerate(_LABELLED.finditer(head)):
        if count >= LABELLED_LINES:
            break
        rank = global_label(match.group(0))
        if rank is not None:
            named.add(rank)
    return named


def _host_in_path(path: Path, hosts: frozenset[str]) -> str:
    """The one host of the job that the path names (a whole word of it), or ""."""
    named = {word for word in _PATH_WORD.split(str(path)) if word in hosts}
    return named.pop() if len(named) == 1 else ""


def _head(path: Path) -> bytes:
    """The file's first bytes; nothing of a FIFO, a device or a folder (never waited on)."""
    try:
        fd = open_regular(path)
    except OSError:
        return b""
    try:
        return os.pread(fd, NCCL_SNIFF_BYTES, 0)
    except OSError:
        return b""
    finally:
        os.close(fd)
