"""Which rank wrote a line of a log that several ranks share.

Launchers and libraries label lines (data-contracts §3); they nest, outermost first, as in
``3: [default3]:[rank11]:[E1122 ...] ...`` (srun ``-l`` task id, torchrun ``--tee`` role and
local rank, PyTorch's global rank), and NCCL starts its own lines with
``gpu-node-001:48211:48302 [3] NCCL INFO ...`` (short host, pid, tid, cudaDev).

A line's rank, from the most to the least direct label:

1. ``[rankN]:`` names the global rank; so does the rank label PyTorch puts right after its
   own log header, which is all its older versions (<= 2.1) write
   (``[E ProcessGroupNCCL.cpp:737] [Rank 1] ...``, ``  what():  [Rank 1] ...``), when it
   is of the default process group (no group, ``PG 0``): another group's rank is no global one.
2. ``[<role><L>]:`` names local rank L on a node: the node of the srun task id when one
   comes first (one torchrun per node under srun), else the node of the file (when every
   rank sharing the file runs on one host); when neither is known, an NCCL prefix after
   it may still tell.
3. An srun task id on its own is the global rank (one task per rank).
4. An NCCL prefix: the pid's rank, learned from NCCL's init line (``comm ... rank R nranks
   WORLD cudaDev D``) in the file; else the rank on that host whose local rank is cudaDev.
   cudaDev is the device index the process sees, so it is trusted only while the init lines
   seen agree with it (a job that gives each process one GPU through CUDA_VISIBLE_DEVICES
   sees device 0 everywhere).

Lines that name no rank, or a rank that does not share the file, belong to none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..core.model import RankMap

# At most 18 digits a number (here and below): int() refuses a string of thousands.
# NCCL's init line (data-contracts §3.2): communicator rank, its size, the CUDA device.
NCCL_INIT = re.compile(
    rb"comm (?:0x)?[0-9a-fA-F]+ rank (\d{1,18}) nranks (\d{1,18}) cudaDev (\d{1,18})")

_PREFIX = re.compile(
    rb"(?:(?P<task>\d{1,18}): )?"
    rb"(?:\[(?P<role>[A-Za-z_]+?)(?P<index>\d{1,18})\]: ?)?"
    rb"(?:\[rank(?P<rank>\d{1,18})\]: ?)?"
    rb"(?:\[\d{4}-\d\d-\d\d \d\d:[^\]]*\] )?"
    rb"(?:(?P<host>[^:\s\[\]]+):(?P<pid>\d{1,18}):\d{1,18} \[(?P<dev>\d{1,18})\] )?"
)
# PyTorch's header (glog-like, with or without a date) or a crash's what(), then its label.
_TORCH_LABEL = re.compile(
    rb"(?:\[[IWEF](?:\d{4} \d\d:\d\d:\d\d\.\d{1,9})? [\w./-]{1,200}:\d{1,9}\] ?|\s*what\(\):\s*)"
    rb"\[(?:PG (?:ID )?(?P<pg>\d{1,18})(?: PG GUID [^\]\s]{1,200})? )?Rank (?P<rank>\d{1,18})\]"
)


def local_rank(rank_map: RankMap, rank: int) -> int:
    """A rank's local rank on its host: its GPU index where known (torchrun's default)."""
    found = rank_map.ranks[rank]
    return found.gpu if found.gpu >= 0 else rank % max(rank_map.gpus_per_node, 1)


def short_host(host: str) -> str:
    """A host name as NCCL writes it: up to the first '.'."""
    return host.split(".", 1)[0]


class RankIndex:
    """The rank map's lookups that labels need, built once per rank map."""

    def __init__(self, rank_map: RankMap) -> None:
        self.rank_map = rank_map
        self.world_size = len(rank_map)
        self.by_node: dict[tuple[int, int], int] = {}
        self.by_host: dict[tuple[bytes, int], int] = {}
        clashes: set[tuple[bytes, int]] = set()
        for rank in rank_map.ranks:
            local = local_rank(rank_map, rank.rank)
            self.by_node.setdefault((rank.node, local), rank.rank)
            for name in {rank.host, short_host(rank.host)}:
                key = (name.encode(), local)
                if self.by_host.setdefault(key, rank.rank) != rank.rank:
                    clashes.add(key)  # two hosts share a short name: say nothing
        for key in clashes:
            del self.by_host[key]


class FileRanks:
    """The ranks of one shared file's lines."""

    def __init__(self, index: RankIndex, owners: Iterable[int]) -> None:
        self.index = index
        self.owners = frozenset(owners)
        nodes = {index.rank_map.ranks[r].node for r in self.owners if 0 <= r < index.world_size}
        self.node = nodes.pop() if len(nodes) == 1 else None
        self.pids: dict[tuple[bytes, bytes], int] = {}
        self.trust_dev = True

    def learn(self, data: bytes) -> None:
        """Take in NCCL's init lines: which pid is which rank, and whether cudaDev is local."""
        world = self.index.world_size
        for init in NCCL_INIT.finditer(data):
            rank, nranks, dev = (int(init.group(i)) for i in (1, 2, 3))
            if nranks != world or rank >= world:
                continue
            start = data.rfind(b"\n", 0, init.start()) + 1
            prefix = _PREFIX.match(data, start)
            if prefix.group("pid") is not None:
                self.pids.setdefault((prefix.group("host"), prefix.group("pid")), rank)
            if dev != local_rank(self.index.rank_map, rank):
                self.trust_dev = False

    def rank_of(self, line: bytes) -> int | None:
        """The rank of the file that wrote ``line``, or None."""
        rank = self._named(line, _PREFIX.match(line))
        return rank if rank in self.owners else None

    def _named(self, line: bytes, label: re.Match[bytes]) -> int | None:
        rank = global_label(line, label)
        if rank is not None:
            return rank
        task, role = label.group("task"), label.group("role")
        if role is not None:
            if role == b"rank":  # TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE="[rank${rank}]:"
                return int(label.group("index"))
            node = int(task) if task is not None else self.node
            rank = self.index.by_node.get((node, int(label.group("index"))))
            if rank is not None:
                return rank
        elif task is not None:
            return int(task)
        host = label.group("host")
        if host is None:
            return None
        rank = self.pids.get((host, label.group("pid")))
        if rank is None and self.trust_dev:
            rank = self.index.by_host.get((host, int(label.group("dev"))))
        return rank


def global_label(line: bytes, label: re.Match[bytes] | None = None) -> int | None:
    """The global rank a line's own labels name (``[rankN]:``, or PyTorch's label of the
    default group after its header), or None; ``label``: ``_PREFIX``'s match, if made."""
    label = label or _PREFIX.match(line)
    if label.group("rank") is not None:
        return int(label.group("rank"))
    torch = _TORCH_LABEL.match(line, label.end())
    if torch is None or torch.group("pg") not in (None, b"0"):
        return None
    return int(torch.group("rank"))
