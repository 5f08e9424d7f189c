"""Which rank runs on which host and GPU, and which DCGM series belongs to which rank.

The rank map comes from, first that works: the labels of the job's own per-rank metrics; a
rank-map file; the Slurm node list with GPUs per node (torchrun's default order); and last
the order of host and GPU in DCGM's series. DCGM series join to ranks by GPU UUID where the
job's metrics carry it (containers and CUDA_VISIBLE_DEVICES renumber GPUs), else by host
(or pod) and GPU index. On Kubernetes the job's series may name only their pod: the rank's
node is then the one DCGM's series give for that pod.

The map is dense (ranks 0..N-1), so N is bounded by what the job shows, never by the largest
number in a label: a rank numbered past ``rank_ceiling`` of the ranks known (the map learned
so far, else the ranks seen: a typo, a hostile ``rank="10000000"``, or one answer with
100,000 extra series) is left out. A rank label is a rank only when written as ASCII decimal
digits without a sign, space or leading zero ("05", " 5", Arabic-Indic or full-width
digits are not rank 5), and a rank named by series on different hosts or GPUs keeps the
first. What was left out is said in the map's ``left_out``. Host names from a file or the
Slurm node list are plain text (``core.text.plain``), and neither may expand past
``MAX_RANKS``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from .domain import (
    DCGM_GPU_LABEL,
    DCGM_HOST_LABELS,
    DCGM_NODE_LABELS,
    DCGM_POD_LABELS,
    DCGM_UUID_LABELS,
)
from .model import Rank, RankMap
from .outside_file import FileTooLarge, NotRegularFile, read_regular
from .text import plain

FROM_JOB = "job metric labels"
FROM_FILE = "rank-map file"
FROM_SLURM = "Slurm node list"
FROM_DCGM = "host/GPU order (no rank labels: ranks are guessed)"
MAX_RANKS = 262_144  # four times the largest jobs run today
MAX_FILE_BYTES = 20_000_000  # a rank-map file of MAX_RANKS lines is ~8 MB


Labels = Mapping[str, str]
_UUID, _OLD_UUID = DCGM_UUID_LABELS  # dcgm-exporter's label, and its old name
Found = Mapping[int, tuple[str, int, str, str]]  # rank -> (host, gpu, uuid, pod)


def is_guessed(rank_map: RankMap) -> bool:
    """Whether ``rank_map`` is a guess from DCGM's GPUs (any job's), not the job's own."""
    return rank_map.source.startswith(FROM_DCGM)


class RankMapError(ValueError):
    """A rank map that cannot be used; the message names the file and line."""


def from_job_series(series: Iterable[Labels], rank_label: str, host_label: str,
                    gpu_label: str, uuid_label: str, pod_label: str = "",
                    node_of_pod: Mapping[str, str] | None = None, known: int = 0
                    ) -> RankMap | None:
    """Ranks named by the job's own metrics; None when no series carries a usable rank.

    A series with a pod and no host runs on the node ``node_of_pod`` names (from DCGM), or,
    where no node is known, is placed by its pod. ``known``: the ranks the job is known to
    have (0 while none is)."""
    found: dict[int, tuple[str, int, str, str]] = {}
    not_numbers: list[str] = []
    twice: set[int] = set()
    nodes = node_of_pod or {}
    for labels in series:
        text = labels.get(rank_label)
        if text is None:
            continue
        rank = rank_number(text)
        if rank is None:
            not_numbers.append(text)
            continue
        gpu = _whole(labels.get(gpu_label))
        pod = labels.get(pod_label, "") if pod_label else ""
        host = labels.get(host_label) or nodes.get(pod) or pod or "?"
        place = (host, -1 if gpu is None else gpu, labels.get(uuid_label, ""), pod)
        if found.setdefault(rank, place) != place:
            twice.add(rank)
    if not found:
        return None
    said = [note for note in (_not_numbers_note(not_numbers), _twice_note(twice)) if note]
    try:
        return _build(found, FROM_JOB, known, said)
    except RankMapError:  # every rank number out of all proportion: no usable rank
        return None


def rank_number(text: str) -> int | None:
    """The rank a label names: ASCII decimal digits, no sign, space or leading zero, at
    most 18 of them (int() refuses a string of thousands); else None."""
    if not (0 < len(text) <= 18 and text.isascii() and text.isdigit()):
        return None
    return int(text) if text == "0" or text[0] != "0" else None


def _not_numbers_note(texts: list[str]) -> str:
    if not texts:
        return ""
    return (f"{len(texts)} series with a rank label that is not a plain number left out "
            f"(e.g. {plain(texts[0], 20)!r})")


def _twice_note(ranks: set[int]) -> str:
    if not ranks:
        return ""
    shown = ", ".join(str(rank) for rank in sorted(ranks)[:5])
    more = f" and {len(ranks) - 5} more" if len(ranks) > 5 else ""
    return f"rank {shown}{more} named by series on different hosts or GPUs: the first kept"


def nodes_of_pods(series: Iterable[Labels]) -> dict[str, str]:
    """Each pod's node, as DCGM's series on Kubernetes say it (the pod under ``exported_pod``
    behind a ServiceMonitor, ``pod`` with honor_labels; the node under ``Hostname``)."""
    nodes: dict[str, str] = {}
    for labels in series:
        node = next((labels[k] for k in DCGM_NODE_LABELS if labels.get(k)), "")
        for key in DCGM_POD_LABELS:
            if node and labels.get(key):
                nodes.setdefault(labels[key], node)
    return nodes


def from_file(path: Path) -> RankMap:
    """Lines of ``rank,host,gpu`` (commas or spaces; ``#`` comments; a header is skipped)."""
    lines = _read_lines(path)
    found: dict[int, tuple[str, int, str, str]] = {}
    for number, line in enumerate(lines, start=1):
        fields = [f for f in re.split(r"[,\s]+", line.split("#", 1)[0].strip()) if f]
        if not fields or (number == 1 and not fields[0].isdecimal()):
            continue
        rank, gpu = (_whole(fields[0]), _whole(fields[2])) if len(fields) >= 3 else (None, None)
        if rank is None or gpu is None:
            raise RankMapError(
                f"{path}: line {number}: expected 'rank,host,gpu' (got {plain(repr(line), 80)})")
        if rank >= MAX_RANKS:
            raise RankMapError(f"{path}: line {number}: rank {rank} is past the most ranktop "
                               f"shows ({MAX_RANKS - 1})")
        if rank in found:
            raise RankMapError(f"{path}: line {number}: rank {rank} appears twice")
        found[rank] = (plain(fields[1]), gpu, "", "")
    if not found:
        raise RankMapError(f"{path}: no ranks in the file")
    return _build(found, f"{FROM_FILE} {path.name}")


def _read_lines(path: Path) -> list[str]:
    """The file's lines; a FIFO, a device or a file of more than MAX_FILE_BYTES is refused."""
    try:
        return read_regular(path, MAX_FILE_BYTES).decode("utf-8").splitlines()
    except NotRegularFile as error:
        raise RankMapError(f"{path}: {error.strerror}") from None
    except FileTooLarge as error:
        raise RankMapError(f"{path}: {error.strerror}: too large for a rank map") from None
    except OSError as error:
        raise RankMapError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise RankMapError(f"{path}: cannot read: {error.__class__.__name__}") from None


def from_slurm(nodelist: str, gpus_per_node: int) -> RankMap:
    """torchrun's default order over a Slurm node list: node by node, GPU by GPU."""
    hosts = [plain(host) for host in expand_nodelist(nodelist, MAX_RANKS // gpus_per_node)]
    if not hosts:
        raise RankMapError(f"Slurm node list {plain(repr(nodelist), 80)} names no nodes")
    return RankMap.grid(hosts, gpus_per_node, FROM_SLURM)


def from_dcgm(series: Iterable[Labels]) -> RankMap | None:
    """A last resort: every GPU DCGM reports, ordered by host and GPU index."""
    gpus = sorted({place for labels in series if (place := dcgm_place(labels)) is not None})
    if not gpus:
        return None
    found = {rank: (host, gpu, "", "") for rank, (host, gpu) in enumerate(gpus)}
    return _build(found, FROM_DCGM)


def dcgm_place(labels: Labels) -> tuple[str, int] | None:
    """The host and GPU index a DCGM series names (None: no host)."""
    host = _host(labels)
    return (host, _whole(labels.get(DCGM_GPU_LABEL)) or 0) if host else None


def expand_nodelist(text: str, limit: int = MAX_RANKS) -> list[str]:
    """Slurm's compressed host list, e.g. ``gpu-[001-003,007],login1`` -> five names; a
    list of more than ``limit`` names is a RankMapError, found before they are made."""
    names: list[str] = []
    for item in _split_outside_brackets(text.strip()):
        if _count_item(item) + len(names) > limit:
            raise RankMapError(f"Slurm node list: more than {limit:,} nodes")
        names.extend(_expand_item(item))
    return names


def _count_item(item: str) -> int:
    """How many names ``item`` expands to, without making them."""
    count = 1
    for group in re.findall(r"\[([^\]]*)\]", item):
        count *= sum(_range_size(part, item) for part in group.split(","))
    return count


def _range_size(part: str, item: str) -> int:
    low, _, high = part.partition("-")
    if not (low.isascii() and low.isdecimal()) or (high and not (
            high.isascii() and high.isdecimal())) or len(low) > 9 or len(high) > 9:
        raise RankMapError(f"Slurm node list: cannot read range {plain(part, 40)!r} in "
                           f"{plain(item, 80)!r}")
    return max(0, int(high or low) - int(low) + 1)


def _split_outside_brackets(text: str) -> list[str]:
    items, depth, current = [], 0, ""
    for char in text:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += char
    items.append(current)
    return [item.strip() for item in items if item.strip()]


def _expand_item(item: str) -> list[str]:
    match = re.search(r"\[([^\]]*)\]", item)
    if match is None:
        return [item]
    head, tail = item[: match.start()], item[match.end():]
    names = []
    for part in match.group(1).split(","):
        _range_size(part, item)
        low, _, high = part.partition("-")
        width = len(low)
        for number in range(int(low), int(high or low) + 1):
            names.extend(_expand_item(f"{head}{number:0{width}d}{tail}"))
    return names


class DcgmJoin:
    """Finds the rank of a series: by its rank label, else (DCGM's series) by GPU UUID,
    else by host (or pod) and GPU index; one dictionary lookup for nearly every series."""

    def __init__(self, rank_map: RankMap, rank_label: str = "") -> None:
        self.size = len(rank_map)
        self.rank_label = rank_label
        self.by_number = {str(r.rank): r.rank for r in rank_map.ranks}
        self.by_uuid = {r.uuid: r.rank for r in rank_map.ranks if r.uuid}
        # GPU indexes as the label writes them, so that a lookup parses nothing
        self.by_place = {(r.pod, str(r.gpu)): r.rank for r in rank_map.ranks if r.pod}
        self.by_place.update({(r.host, str(r.gpu)): r.rank for r in rank_map.ranks})
        self._gpus = {gpu for _, gpu in self.by_place}

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels a DCGM series needs for this join: its UUID where the job named its
        GPUs, else its host and GPU index; all of them while no rank is known."""
        if self.by_uuid:
            return DCGM_UUID_LABELS
        place = (DCGM_GPU_LABEL, *DCGM_HOST_LABELS)
        return place if self.size else (*DCGM_UUID_LABELS, *place)

    def rank_of(self, labels: Labels) -> int | None:
        """The rank of the map that the series belongs to; None for none."""
        number = labels.get(self.rank_label)
        if number is not None and rank_number(number) is not None:
            return self.by_number.get(number)  # None past the map
        if self.by_uuid:
            uuid = labels.get(_UUID) or labels.get(_OLD_UUID)
            if uuid:
                # The job named its GPUs: a GPU it did not name is another job's.
                return self.by_uuid.get(uuid)
        return self._by_place(labels)

    def _by_place(self, labels: Labels) -> int | None:
        gpu = labels.get(DCGM_GPU_LABEL)
        if gpu not in self._gpus:  # " 3" or "03": the index as the map writes it
            gpu = str(_whole(gpu))
        for key in DCGM_HOST_LABELS:
            host = labels.get(key)
            if host:
                rank = self.by_place.get((host, gpu))
                if rank is not None:
                    return rank
        return None


def _host(labels: Labels) -> str:
    return next((labels[k] for k in DCGM_HOST_LABELS if labels.get(k)), "")


def _whole(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()  # 18 digits at most: int() refuses a string of thousands
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


def rank_ceiling(seen: int) -> int:
    """The rank numbers a map may hold when ``seen`` ranks were seen: gaps (ranks that died
    before anyone looked) are allowed, a rank number out of all proportion is not."""
    return min(MAX_RANKS, max(2 * seen, seen + 1024))


def _build(found: Found, source: str, known: int = 0, said: Iterable[str] = ()) -> RankMap:
    """A dense rank map 0..max. A rank never seen (a gap in the labels: it died before
    anyone looked) is placed where torchrun's order puts it, when its neighbours say so;
    else on an unknown host. Ranks past ``rank_ceiling`` of the ``known`` ranks (else of
    those found) are left out, and said so, with what ``said`` says."""
    said = list(said)
    ceiling = rank_ceiling(known or len(found))
    if max(found) >= ceiling:
        kept = {rank: place for rank, place in found.items() if rank < ceiling}
        said.insert(0, f"{len(found) - len(kept)} rank(s) numbered past {ceiling - 1} "
                       f"left out")
        if not kept:
            raise RankMapError(f"{source}: {said[0]}: no rank below {ceiling}")
        found = kept
    hosts: list[str] = []
    for rank in sorted(found):
        if found[rank][0] not in hosts:
            hosts.append(found[rank][0])
    per_host: dict[str, int] = {}
    for host, *_ in found.values():
        per_host[host] = per_host.get(host, 0) + 1
    gpus_per_node = max(per_host.values())
    node_of = {host: index for index, host in enumerate(hosts)}
    ranks = [
        Rank(rank=r, host=found[r][0], gpu=found[r][1], node=node_of[found[r][0]],
             uuid=found[r][2], pod=found[r][3]) if r in found
        else _inferred(r, found, gpus_per_node, node_of)
        for r in range(max(found) + 1)
    ]
    return RankMap(ranks=tuple(ranks), hosts=tuple(hosts), gpus_per_node=gpus_per_node,
                   source=source, left_out="; ".join(said))


def _inferred(rank: int, found: Found, gpus_per_node: int,
              node_of: Mapping[str, int]) -> Rank:
    """A gap rank between two seen ones on the same host, one GPU apart from each."""
    before, after = found.get(rank - 1), found.get(rank + 1)
    for neighbour, step in ((before, 1), (after, -1)):
        if neighbour is None or neighbour[1] < 0:
            continue
        host, gpu = neighbour[0], neighbour[1] + step
        other = after if step == 1 else before
        fits = 0 <= gpu < gpus_per_node
        agrees = other is None or other[0] != host or other[1] == gpu + step
        if fits and agrees:
            return Rank(rank=rank, host=host, gpu=gpu, node=node_of[host], inferred=True)
    return Rank(rank=rank, host="?", gpu=-1, node=-1, inferred=True)
