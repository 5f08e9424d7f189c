"""The simulated job's PyTorch Flight Recorder dumps, written when its watchdogs fire.

In a real job (PyTorch 2.6 on) the first rank whose watchdog times out tells the others
through the store, and every rank still alive dumps its ring buffer of recent collectives
to ``<prefix><rank>`` within about a second (``TORCH_NCCL_COORD_CHECK_MILSEC``). The
simulator does the same for its scripted hangs, in PyTorch's default file names under one
folder (``comm_lib_trace_rank_<rank>``), pickled like PyTorch's or as its JSON variant:

- ``rank_death``: the dead rank writes nothing; the others wait in the hung all-reduce;
- ``collective_hang`` with ``cause = "missing"``: the rank is alive but stuck in Python
  before the all-reduce; its dump ends with the collective before;
- ``collective_hang`` with ``cause = "mismatch"``: the rank entered the all-reduce from
  another line of code, with other sizes.

Each step runs ``COLLECTIVES_PER_STEP`` collectives on the default group, so the hung one
has the SeqNum the watchdog lines give. A dump's modification time is the simulated moment
it was written.

Every waiting rank's dump of one hang holds the same bytes (a waiting rank's ring buffer
names no rank), so the writer works each document out once per hang, and the ranks' files
are hard links to one copy, dated when the first of them landed: a dump lists every rank of
the default group, and at 100,000 ranks 100,000 separate copies would take 70 GB. The cost
of a hang is then linear in ranks: one link per rank.
"""

from __future__ import annotations

import errno
import json
import math
import os
import pickle
import random
import threading
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from pathlib import Path

from .cluster import SimCluster
from .log_writer import (
    BUCKET_NUMEL,
    COLLECTIVES_PER_STEP,
    EPOCH,
    WATCHDOG_TIMEOUT_MS,
    hung_seq,
)

PREFIX = "comm_lib_trace_rank_"
COPY = ".ranktop-demo-dump"  # the one copy of a dump the ranks' files link to
FLIGHT_FOLDER = "flight-recorder"  # beside the ranks' log trees
VERSION = "2.10"
ENTRIES = 24  # the demo's ring buffer; PyTorch keeps 2000
SIGNAL_SPREAD = 1.0  # seconds over which the ranks notice the dump signal
TORCH = "/usr/local/lib/python3.11/site-packages/torch/distributed"
TRAIN = "/workspace/llama/train.py"
# The collectives of one step: (name, input sizes, dtype, caller, line).
STEP = (
    ("nccl:broadcast", [[8, 4096]], "Long", "load_batch", 118),
    ("nccl:all_reduce", [[BUCKET_NUMEL]], "Float", "sync_gradients", 143),
    ("nccl:all_reduce", [[BUCKET_NUMEL]], "Float", "sync_gradients", 143),
    ("nccl:all_reduce", [[1]], "Float", "log_loss", 171),
)
MISMATCH = ([[BUCKET_NUMEL // 2]], "/workspace/llama/moe.py", "route_tokens", 88)


@dataclass(frozen=True)
class _Hang:
    culprit: int
    cause: str  # dead, missing or mismatch
    form: str  # pickle or json
    start: float
    end: float


class FlightWriter:
    """Writes each rank's dump once its scripted hang's watchdogs have fired."""

    def __init__(self, cluster: SimCluster, root: Path, seed: int = 0, *,
                 epoch: float = EPOCH, entries: int = ENTRIES) -> None:
        self.cluster, self.root, self.entries = cluster, Path(root), entries
        self._seed, self._epoch = seed, epoch
        self._loop = cluster.scenario.loop_seconds
        self._n = len(cluster.rank_map)
        self._hangs = [_Hang(f.rank % self._n,
                             "dead" if f.effect == "rank_death" else
                             f.params.get("cause", "missing"),
                             f.params.get("dumps", "pickle"), f.start, f.end)
                       for f in cluster.scenario.faults
                       if f.effect in ("rank_death", "collective_hang")
                       and f.params.get("dumps") != "none"
                       and not f.params.get("others_step")]  # no watchdog fires: no dump
        self._last: float | None = None
        self._order: dict[int, tuple[list[float], list[int]]] = {}  # hang -> dump order
        self._copies: dict[tuple[int, int, str], _Copy] = {}  # (hang, loop, role) -> copy
        self.stopping = threading.Event()

    def stop(self) -> None:
        """End a write in progress at the next dump, and write nothing more."""
        self.stopping.set()

    @property
    def spec(self) -> str:
        """The pattern that finds these dumps (``--flight-recorder``)."""
        return str(self.root)

    def dump_time(self, hang: _Hang, rank: int) -> float:
        """Loop time at which ``rank`` writes its dump of ``hang``."""
        drawn = random.Random(f"{self._seed}:fr:{rank}:{hang.start:g}").random()
        return hang.start + WATCHDOG_TIMEOUT_MS / 1000 + SIGNAL_SPREAD * drawn

    def advance(self, t: float) -> None:
        """Write every dump due since the last call, up to ``t`` seconds since the start."""
        if self._last is None:
            self._last = math.floor(t / self._loop) * self._loop - 1e-6
            self.root.mkdir(parents=True, exist_ok=True)
        if t <= self._last:
            return
        first = max(math.floor(self._last / self._loop), math.floor(t / self._loop) - 1)
        for k in range(first, math.floor(t / self._loop) + 1):
            base = k * self._loop
            for index, hang in enumerate(self._hangs):
                opens = hang.start + WATCHDOG_TIMEOUT_MS / 1000  # no dump before
                if t - base <= opens or self._last - base >= opens + SIGNAL_SPREAD:
                    continue
                times, ranks = self._dump_order(index)
                lo = bisect_right(times, self._last - base)
                hi = min(bisect_right(times, t - base), bisect_left(times, hang.end))
                for at, rank in zip(times[lo:hi], ranks[lo:hi], strict=True):
                    if self.stopping.is_set():
                        return
                    self._write(index, k, rank, at)
        self._last = t
        for key in [key for key in self._copies if key[1] < first]:  # an earlier loop's
            self._copies.pop(key).unlink()

    def _dump_order(self, index: int) -> tuple[list[float], list[int]]:
        """The loop times at which the ranks write their dumps of a hang, in order, and
        the ranks (worked out once: a hang's dumps come over many polls)."""
        if index not in self._order:
            hang = self._hangs[index]
            order = sorted((self.dump_time(hang, rank), rank) for rank in range(self._n)
                           if not (hang.cause == "dead" and rank == hang.culprit))
            self._order[index] = ([at for at, _ in order], [rank for _, rank in order])
        return self._order[index]

    def _write(self, index: int, k: int, rank: int, at: float) -> None:
        hang, role = self._hangs[index], _role(self._hangs[index], rank)
        key = (index, k, role)
        if key not in self._copies:  # the first dump of this role in this hang
            base = k * self._loop
            seq = hung_seq(self.cluster, base + hang.start)
            began_ns = int((self._epoch + base + hang.start) * 1e9)
            doc = dump_document(rank, self._n, seq, entries=self.entries, began_ns=began_ns,
                                role=role, form=hang.form)
            self._copies[key] = _Copy(self.root / f"{COPY}.{index}.{k}.{role}",
                                      encode_dump(doc, hang.form), self._epoch + base + at)
            self._copies[key].write()
        copy, path = self._copies[key], self.root / f"{PREFIX}{rank}"
        try:
            link_whole(copy.path, path)
        except OSError as error:
            if error.errno != errno.EMLINK:  # a file system without hard links
                write_bytes_whole(path, copy.data, copy.mtime)
                return
            copy.write()  # the copy has as many names as ext4 allows (65,000): a new one
            link_whole(copy.path, path)


@dataclass(frozen=True)
class _Copy:
    """The one copy of a dump that the ranks' files are names of."""

    path: Path
    data: bytes
    mtime: float

    def write(self) -> None:
        """(Re)write it; names given to an earlier copy keep that one."""
        write_bytes_whole(self.path, self.data, self.mtime)

    def unlink(self) -> None:
        self.path.unlink(missing_ok=True)


def _role(hang: _Hang, rank: int) -> str:
    return hang.cause if rank == hang.culprit else "waiting"


def dump_document(rank: int, world_size: int, seq: int, *, entries: int = ENTRIES,
                  began_ns: int = 0, role: str = "waiting", form: str = "pickle",
                  step_ns: int = 280_000_000) -> dict:
    """One rank's dump of a hang in the all-reduce ``seq`` of the default group.

    ``role``: "waiting" (it waits in ``seq``), "missing" (its last collective is the one
    before, completed) or "mismatch" (it waits in ``seq`` with other sizes, from elsewhere).
    """
    last = seq - 1 if role == "missing" else seq
    records = []
    for s in range(max(1, last - entries + 1), last + 1):
        name, sizes, dtype, caller, line = STEP[s % COLLECTIVES_PER_STEP]
        filename = TRAIN
        if s == seq and role == "mismatch":
            sizes, filename, caller, line = MISMATCH
        created = began_ns - (seq - s) * step_ns
        done = s < seq
        record = {
            "record_id": s, "pg_id": 0, "process_group": ("0", "default_pg"),
            "collective_seq_id": s, "p2p_seq_id": 0, "op_id": s, "profiling_name": name,
            "time_created_ns": created, "input_sizes": sizes, "input_dtypes": [dtype],
            "output_sizes": sizes, "output_dtypes": [dtype],
            "state": "completed" if done else "started",
            "time_discovered_started_ns": created + 40_000,
            "time_discovered_completed_ns": created + 9_000_000 if done else None,
            "retired": done, "timeout_ms": WATCHDOG_TIMEOUT_MS, "is_p2p": False,
            "frames": _frames(filename, caller, line),
        }
        records.append(record)
    status = {"last_enqueued_collective": last, "last_started_collective": last,
              "last_completed_collective": seq - 1}
    doc = {"version": VERSION, "comm_lib_version": "2.27.3",
           "pg_config": {"0": {"name": "0", "desc": "default_pg",
                               "ranks": str(list(range(world_size)))}},
           "pg_status": {"0": status}, "entries": records}
    return _as_json(doc) if form == "json" else doc


def _frames(filename: str, caller: str, line: int) -> list[dict]:
    return [
        {"name": "all_reduce", "filename": f"{TORCH}/distributed_c10d.py", "line": 2501},
        {"name": "wrapper", "filename": f"{TORCH}/c10d_logger.py", "line": 81},
        {"name": caller, "filename": filename, "line": line},
        {"name": "train_step", "filename": TRAIN, "line": 201},
        {"name": "<module>", "filename": TRAIN, "line": 260},
    ]


def _as_json(doc: dict) -> dict:
    """PyTorch's JSON variant: no frames, pg_status as strings, 0 for unknown times."""
    for record in doc["entries"]:
        del record["frames"]
        record["process_group"] = list(record["process_group"])
        record["time_discovered_completed_ns"] = record["time_discovered_completed_ns"] or 0
    doc["pg_status"] = {k: {name: str(v) for name, v in status.items()}
                        for k, status in doc["pg_status"].items()}
    return doc


def link_whole(copy: Path, path: Path) -> None:
    """``path`` becomes another name of ``copy``, at once: a reader never sees it half made
    (``OSError`` where the file system gives no more names to ``copy``, or none at all)."""
    try:
        os.link(copy, path)  # a new name comes whole
    except FileExistsError:  # an earlier hang's dump: replaced whole
        partial = path.with_name(f".{path.name}.partial")
        partial.unlink(missing_ok=True)
        os.link(copy, partial)
        os.replace(partial, path)


def write_dump(path: Path, doc: dict, form: str, mtime: float | None = None) -> None:
    """Write a dump whole (a reader never sees half of it), dated ``mtime``."""
    write_bytes_whole(path, encode_dump(doc, form), mtime)


def encode_dump(doc: dict, form: str) -> bytes:
    return json.dumps(doc).encode() if form == "json" else pickle.dumps(doc, protocol=2)


def write_bytes_whole(path: Path, data: bytes, mtime: float | None = None) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_bytes(data)
    if mtime is not None:
        os.utime(partial, (mtime, mtime))
    os.replace(partial, path)
