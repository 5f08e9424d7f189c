"""The simulated job's per-rank log files, so the demo's log tail and hang triage have logs.

``LogWriter.advance(t)`` appends every line due since its last call, in torchrun's
``--log-dir`` layout with one tree per node::

    root/<host>/<run_id>_<random8>/attempt_0/<local_rank>/{stdout,stderr}.log

(on Kubernetes, ``tree`` names each node's folder after its pod instead of its host), or,
where the scenario's ``log_layout`` is "nccl_files", one file a process, all its lines in
it, named as ``NCCL_DEBUG_FILE=nccl.%h.%p.log`` names it::

    root/nccl.<short host>.<pid>.log

stderr gets NCCL (2.26+: WARN lines carry a timestamp after an empty line) and PyTorch
ProcessGroupNCCL lines; stdout gets training progress, stamped as Python's logging stamps
(so a rank's files can be read in time order). Each line is a function of the
seed and the simulated time it is due at, so files do not depend on how often we poll.
A scenario's log_rotation rotates files under the writer (``rotation.py``); the writer
opens its files by name for every write, as a process told to reopen its logs would.
"""

from __future__ import annotations

import calendar
import hashlib
import math
import random
import threading
import time
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..core.model import Frame
from .cluster import SimCluster
from .rotation import rotate
from .scenario import Fault

if TYPE_CHECKING:
    from .flight_writer import FlightWriter

EPOCH = calendar.timegm((2026, 3, 14, 2, 0, 0))  # the demo's simulated wall clock at t = 0
NCCL_VERSION = "2.27.3+cuda12.9"
CUDA_DRIVER = 12090
PROGRESS_EVERY = 20  # seconds between a rank's progress lines; rank 0 twice as often
WATCHDOG_TIMEOUT_MS = 30_000  # short for the demo; PyTorch's default is 600000
COLLECTIVES_PER_STEP = 4  # SeqNum of the hung all-reduce = 4 x step + 2
BUCKET_NUMEL = 6_553_600  # a 25 MB gradient bucket of float32
RESTART_MARKER = "[ranktop demo] scenario restarts"
PG = "[PG ID 0 PG GUID 0(default_pg) Rank {rank}]"
BUS_IDS = ("18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000")
STREAMS = ("stdout", "stderr")
CUDA_FAILURE_AFTER = 0.4  # seconds from an XID to the rank's CUDA error in its log
DEATH_AFTER_XID = 10.0  # a rank that dies this soon after its XID died of it
CHECKPOINT_ORDER = 2_000_000  # a save is logged after the second's progress lines
_SUFFIX_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"  # what tempfile.mkdtemp draws from


class _Event(NamedTuple):
    time: float  # loop time (in the schedule) or seconds since the demo started
    order: int
    rank: int
    stream: str  # "stdout" or "stderr"
    kind: str
    arg: object = None


class LogWriter:
    """Appends the simulated job's log lines to per-rank files as simulated time passes."""

    def __init__(self, cluster: SimCluster, root: Path, run_id: str | None = None,
                 seed: int = 0, *, epoch: float = EPOCH,
                 tree: Callable[[int], str] | None = None,
                 flight: FlightWriter | None = None) -> None:
        self.cluster = cluster
        self.flight = flight  # the ranks' Flight Recorder dumps, written as time passes
        self.flight_spec = flight.spec if flight is not None else ""
        self.root = Path(root)
        self._tree = tree  # node number -> its folder's name (default: the host's name)
        self._per_process = cluster.scenario.log_layout == "nccl_files"
        self.layout_spec = (f"nccl:{self.root}/nccl.%h.%p.log" if self._per_process
                            else f"torchrun:{self.root}")
        self._seed, self._epoch = seed, epoch
        self._loop = cluster.scenario.loop_seconds
        self._ranks = cluster.rank_map.ranks
        self._n = len(self._ranks)
        self._node_count = len(cluster.rank_map.hosts)
        run_id = run_id or cluster.scenario.name
        nodes = dict.fromkeys((r.host, r.node) for r in self._ranks)  # a node's GPUs share
        folders = {node: self._rank_dir(*node, run_id) for node in nodes}
        self._paths = [folders[r.host, r.node] / str(r.gpu) for r in self._ranks]
        rng = random.Random(f"{seed}:ranks")
        self._slot = [rng.randrange(PROGRESS_EVERY) for _ in self._ranks]
        self._by_slot = [[r for r, s in enumerate(self._slot) if s == slot]
                         for slot in range(PROGRESS_EVERY)]
        # torchrun spawns a node's workers one after another: nearby pids.
        first_pid = {host: random.Random(f"{seed}:{host}:pid").randrange(20_000, 3_900_000)
                     for host, _ in nodes}
        self._pid = [first_pid[r.host] + 3 * r.gpu for r in self._ranks]
        self._deaths: list[tuple[int, float, float]] = []
        self._schedule = self._build_schedule()
        self._times = [e.time for e in self._schedule]
        self._last: float | None = None
        self._first_loop = 0
        self._seq_cache: dict[tuple[int, float], int] = {}
        self.stopping = threading.Event()

    def stop(self) -> None:
        """End a write in progress at the next file (a job of 100,000 ranks writes for
        seconds), and write nothing more: quitting never waits for the logs."""
        self.stopping.set()
        if self.flight is not None:
            self.flight.stop()

    def _file(self, rank: int, stream: str) -> Path:
        """Where a rank's stream goes."""
        if self._per_process:
            host = self._ranks[rank].host.split(".", 1)[0]
            return self.root / f"nccl.{host}.{self._pid[rank]}.log"
        return self._paths[rank] / f"{stream}.log"

    def _files(self, rank: int) -> list[Path]:
        """A rank's files, each once."""
        return list(dict.fromkeys(self._file(rank, stream) for stream in STREAMS))

    def _rank_dir(self, host: str, node: int, run_id: str) -> Path:
        """The node's attempt directory: each node's torchrun draws its own random suffix."""
        rng = random.Random(f"{self._seed}:{host}:logdir")
        suffix = "".join(rng.choice(_SUFFIX_CHARS) for _ in range(8))
        folder = self._tree(node) if self._tree is not None else host
        return self.root / folder / f"{run_id}_{suffix}" / "attempt_0"

    def _build_schedule(self) -> list[_Event]:
        """One loop's events other than progress lines, by loop time."""
        events: list[_Event] = []

        def add(at: float, rank: int, stream: str, kind: str, arg: object = None) -> None:
            events.append(_Event(at, len(events), rank, stream, kind, arg))

        def during(fault: Fault, after: float, kind: str, arg: object = None) -> None:
            if after < fault.duration:  # rank 0 only remarks on a fault while it lasts
                add(fault.start + after, 0, "stderr", kind, arg)

        def everyone(at: float, kind: str, stream: str = "stderr") -> None:
            for rank in range(self._n):
                add(at, rank, stream, kind)

        everyone(0.0, "start")
        everyone(0.0, "start", "stdout")  # a restart marker from the second loop on
        xids = [f for f in self.cluster.scenario.faults if f.effect == "xid"]
        for fault in self.cluster.scenario.faults:
            rank = None if fault.rank is None else fault.rank % self._n
            start, end = fault.start, fault.end
            if fault.effect in ("thermal_throttle", "straggler"):
                during(fault, 16.0 if fault.effect == "thermal_throttle" else 6.0, "slow_step")
            elif fault.effect == "nvlink_drop":
                node = self._ranks[rank].node
                for peer in (r for r in self._ranks if r.node == node):
                    add(start + 0.2 + 0.01 * peer.gpu, peer.rank, "stderr", "ib", "port error")
                    add(end + 0.2 + 0.01 * peer.gpu, peer.rank, "stderr", "ib", "port active")
            elif fault.effect == "xid" and self._killed_by(fault):
                # Its process ends on the CUDA error; a rank that outlives its XID (a
                # contained error) logs no crash.
                add(start + CUDA_FAILURE_AFTER, rank, "stderr", "cuda_failure")
            elif fault.effect in ("rank_death", "collective_hang"):
                if fault.effect == "rank_death":
                    self._deaths.append((rank, self._silent_from(fault, xids), end))
                # A rank stuck outside NCCL (cause "missing") times out in nothing; the
                # others time out unless they go on stepping without the dead rank.
                quiet = rank if fault.params.get("cause", "missing") == "missing" else -1
                if not fault.params.get("others_step"):
                    self._add_watchdogs(add, quiet, start, end)
                everyone(end, "init")
                add(end + 0.5, 0, "stdout", "resume")
            elif fault.effect == "job_stall":
                during(fault, 5.0, "stall")
                add(end, 0, "stderr", "stall_end", fault.duration)
            elif fault.effect == "loss_divergence":
                during(fault, 3.0, "loss_spike", start)
                during(fault, 20.0, "loss_rising")
            elif fault.effect == "log_rotation":
                self._add_rotations(add, fault)
        return sorted((e for e in events if e.time < self._loop), key=lambda e: e.time)

    def _killed_by(self, xid: Fault) -> bool:
        """Whether ``xid``'s rank dies of it: a death of that rank follows it soon."""
        n = self._n
        return any(f.effect == "rank_death" and f.rank % n == xid.rank % n
                   and 0 <= f.start - xid.start <= DEATH_AFTER_XID
                   for f in self.cluster.scenario.faults)

    def _silent_from(self, death: Fault, xids: list[Fault]) -> float:
        """When a dying rank stops writing: just after its CUDA error, if an XID killed it."""
        n = self._n
        for xid in xids:
            if xid.rank % n == death.rank % n and 0 <= death.start - xid.start <= DEATH_AFTER_XID:
                return min(death.start, xid.start + CUDA_FAILURE_AFTER + 0.001)
        return death.start

    def _add_rotations(self, add: Callable[..., None], fault: Fault) -> None:
        """logrotate on ``nodes`` nodes from the fault rank's, each at its own moment."""
        first, count = self._ranks[fault.rank % self._n].node, self._node_count
        for k in range(min(fault.params["nodes"], count)):
            node = (first + k) % count
            drawn = random.Random(f"{self._seed}:rotate:{fault.start:g}:{node}")
            at = fault.start + drawn.uniform(0.0, fault.duration)
            for peer in (r for r in self._ranks if r.node == node):
                add(at + 0.001 * peer.gpu, peer.rank, "both", "rotate", fault.params["mode"])

    def _add_watchdogs(self, add: Callable[..., None], dead: int, start: float, end: float
                       ) -> None:
        """Every other rank's watchdog fires once the all-reduce has waited past its timeout."""
        for rank in range(self._n):
            late = random.Random(f"{self._seed}:wd:{rank}").randrange(5, 900)
            ran_ms = WATCHDOG_TIMEOUT_MS + late
            if rank != dead and start + ran_ms / 1000 < end:
                add(start + ran_ms / 1000, rank, "stderr", "watchdog", (start, ran_ms))

    def _dead(self, rank: int, loop_time: float) -> bool:
        return any(r == rank and s <= loop_time < e for r, s, e in self._deaths)

    def _due(self, t0: float, t1: float) -> list[_Event]:
        """Every event due in (t0, t1], in absolute time, in the order it is written."""
        due: list[_Event] = []
        for k in range(max(self._first_loop, math.floor(t0 / self._loop)),
                       math.floor(t1 / self._loop) + 1):
            base = k * self._loop
            lo = bisect_right(self._times, t0 - base)
            hi = bisect_right(self._times, t1 - base)
            for e in self._schedule[lo:hi]:
                kind = "restart" if e.kind == "start" and k > self._first_loop else e.kind
                if (kind, e.stream) == ("start", "stdout"):
                    continue
                if kind == "rotate" or not self._dead(e.rank, e.time):  # logrotate goes on
                    due.append(e._replace(time=base + e.time, kind=kind))
        half = PROGRESS_EVERY // 2
        for second in range(math.floor(t0) + 1, math.floor(t1) + 1):
            slot = int(second % self._loop) % PROGRESS_EVERY
            extra = [0] if slot != self._slot[0] and slot % half == self._slot[0] % half else []
            due += [_Event(float(second), 1_000_000 + r, r, "stdout", "progress")
                    for r in extra + self._by_slot[slot]
                    if not self._dead(r, second % self._loop)]
            due += self._checkpoint(second)
        due.sort(key=lambda e: (e.time, e.order))
        return due

    def _checkpoint(self, second: int) -> list[_Event]:
        """Rank 0's line when the job saved a checkpoint in the second before ``second``."""
        saved = self.cluster.checkpoint_step(self.cluster.step_at(second))
        if saved == self.cluster.checkpoint_step(self.cluster.step_at(second - 1)):
            return []
        if self._dead(0, second % self._loop):
            return []
        return [_Event(float(second), CHECKPOINT_ORDER, 0, "stdout", "checkpoint", saved)]

    def advance(self, t: float) -> None:
        """Append every line due since the last call, up to t seconds since the demo began."""
        if self.stopping.is_set():
            return
        first = self._last is None
        if first:
            self._first_loop = math.floor(t / self._loop)
            self._last = self._first_loop * self._loop - 1e-6
            for rank in range(self._n):
                if self.stopping.is_set():
                    return
                self._file(rank, STREAMS[0]).parent.mkdir(parents=True, exist_ok=True)
        if t <= self._last:
            return
        if t - self._last > self._loop + 1:  # e.g. a suspended laptop: start from this loop
            self._first_loop = math.floor(t / self._loop) - 1
            self._last = (self._first_loop + 1) * self._loop - 1e-6
        pending: dict[tuple[int, str], list[str]] = defaultdict(list)
        written: set[tuple[int, str]] = set()
        frames: dict[float, Frame] = {}
        for event in self._due(self._last, t):
            if event.kind == "rotate":
                self._write(pending, written, event.rank)  # what came before goes with it
                for path in self._files(event.rank):
                    rotate(path, event.arg)
            else:
                pending[event.rank, event.stream].extend(self._render(event, frames))
        self._last = t
        self._write(pending, written)
        if self.flight is not None:
            self.flight.advance(t)
        if first:  # both files exist from the start, as under torchrun (creating is slow)
            for rank in range(self._n):
                if self.stopping.is_set():
                    return
                for stream in STREAMS:
                    path = self._file(rank, stream)
                    if (rank, stream) not in written and not path.exists():
                        path.touch()

    def _write(self, pending: dict[tuple[int, str], list[str]], written: set[tuple[int, str]],
               rank: int | None = None) -> None:
        """Append the pending lines (of one rank, or all), one file handle at a time."""
        for key in [k for k in pending if rank is None or k[0] == rank]:
            if self.stopping.is_set():
                return
            lines = pending.pop(key)
            if lines:
                rank_of, stream = key
                with open(self._file(rank_of, stream), "a", encoding="utf-8") as f:
                    f.write("".join(lines))
                written.add(key)

    def _render(self, e: _Event, frames: dict[float, Frame]) -> list[str]:
        if e.kind == "progress" or e.kind in _RANK0:
            if e.time not in frames:
                frames[e.time] = self.cluster.frame_at(e.time)
            render = self._progress if e.kind == "progress" else self._training
            return render(e, frames[e.time])
        if e.kind in ("start", "init", "restart"):
            init = self._nccl_init(e) if e.stream == "stderr" else []
            return [RESTART_MARKER + "\n", *init] if e.kind == "restart" else init
        if e.kind == "watchdog":
            return self._watchdog(e)
        if e.kind == "cuda_failure":
            return self._cuda_failure(e)
        if e.kind == "ib":
            hca = f"mlx5_{self._ranks[e.rank].gpu}:1"
            message = f"NET/IB : {hca} Got async event : {e.arg}"
            return [self._warn(e, "transport/net_ib.cc:98", message)]
        raise ValueError(f"no such log event: {e.kind}")

    def _nccl_prefix(self, rank: int, thread: int = 0) -> str:
        r, pid = self._ranks[rank], self._pid[rank]
        return f"{r.host}:{pid}:{pid + thread} [{r.gpu}]"

    def _nccl_init(self, e: _Event) -> list[str]:
        r, pfx = self._ranks[e.rank], self._nccl_prefix(e.rank)
        generation = f"{self._seed}:{e.time:.3f}"
        comm_id = hashlib.blake2b(generation.encode(), digest_size=8).hexdigest()
        comm = random.Random(f"{generation}:{e.rank}").randrange(0x55D000000000, 0x55DFFFFFFFFF)
        ip = f"10.42.{r.node // 250}.{r.node % 250 + 1}"
        per_node = self.cluster.rank_map.gpus_per_node
        hcas = " ".join(f"[{i}]mlx5_{i}:1/IB" for i in range(min(8, per_node)))
        bus = BUS_IDS[r.gpu] if r.gpu < len(BUS_IDS) else f"{(0x18 + 0x13 * r.gpu) % 0x100:x}000"
        ident = (f"ncclCommInitRankConfig comm 0x{comm:x} rank {e.rank} nranks {self._n}"
                 f" cudaDev {r.gpu} nvmlDev {r.gpu} busId {bus} commId 0x{comm_id}")
        lines = [f"cudaDriverVersion {CUDA_DRIVER}", f"Bootstrap: Using bond0:{ip}<0>"]
        if e.rank == 0:
            lines.append(f"NCCL version {NCCL_VERSION}")
        lines += [f"NET/IB : Using {hcas} ; OOB bond0:{ip}<0>", "Using network IB",
                  f"{ident} - Init START", f"{ident} - Init COMPLETE"]
        return [f"{pfx} NCCL INFO {line}\n" for line in lines]

    def _wall(self, e: _Event, line: int = 0) -> tuple[time.struct_time, int]:
        """When an event's line was written, as UTC seconds and nanoseconds."""
        noise = random.Random(f"{self._seed}:{e.rank}:{e.time:.3f}").randrange(20_000_000)
        ns = round((self._epoch + e.time) * 1e6) * 1000 + noise + 48_311 * line
        return time.gmtime(ns // 10**9), ns % 10**9

    def _warn(self, e: _Event, where: str, message: str) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", self._wall(e)[0])
        return f"\n[{stamp}] {self._nccl_prefix(e.rank, 211)} {where} NCCL WARN {message}\n"

    def _glog(self, e: _Event, line: int, source: str, message: str) -> str:
        seconds, nanos = self._wall(e, line)
        stamp = f"{time.strftime('%m%d %H:%M:%S', seconds)}.{nanos:09d}"
        return f"[rank{e.rank}]:[E{stamp} {source}] {PG.format(rank=e.rank)} {message}\n"

    def _watchdog(self, e: _Event) -> list[str]:
        start, ran_ms = e.arg
        seq = self._hung_seq(e.time - (e.time % self._loop), start)
        work = (f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={BUCKET_NUMEL}, "
                f"NumelOut={BUCKET_NUMEL}, Timeout(ms)={WATCHDOG_TIMEOUT_MS})")
        return [
            self._glog(e, 0, "ProcessGroupNCCL.cpp:632", "Watchdog caught collective operation "
                       f"timeout: {work} ran for {ran_ms} milliseconds before timing out."),
            self._glog(e, 1, "ProcessGroupNCCL.cpp:2168", f"Timeout at NCCL work: {seq}, last "
                       f"enqueued NCCL work: {seq}, last completed NCCL work: {seq - 1}."),
            self._glog(e, 2, "ProcessGroupNCCL.cpp:667", "Some NCCL operations have failed or "
                       "timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU "
                       "operations might run on corrupted/incomplete data."),
            self._glog(e, 3, "ProcessGroupNCCL.cpp:673",
                       "To avoid data inconsistency, we are taking the entire process down."),
        ]

    def _hung_seq(self, loop_base: float, start: float) -> int:
        key = (round(loop_base / self._loop), start)
        if key not in self._seq_cache:
            self._seq_cache[key] = hung_seq(self.cluster, loop_base + start)
        return self._seq_cache[key]

    def _cuda_failure(self, e: _Event) -> list[str]:
        return [
            self._warn(e, "enqueue.cc:1556", "Cuda failure 'unspecified launch failure'"),
            f"{self._nccl_prefix(e.rank, 211)} NCCL INFO enqueue.cc:1571 -> 1\n",
            self._glog(e, 9000, "ProcessGroupNCCL.cpp:1895", "Process group watchdog thread "
                       "terminated with exception: CUDA error: unspecified launch failure"),
            "CUDA kernel errors might be asynchronously reported at some other API call, so the"
            " stacktrace below might be incorrect.\n",
            "terminate called after throwing an instance of 'c10::DistBackendError'\n",
        ]

    def _progress(self, e: _Event, frame: Frame) -> list[str]:
        step_time = frame.value("step_time", e.rank)
        tokens = frame.job["tokens_per_s"]
        if tokens <= 0 or step_time != step_time:  # hung, stalled or dead: no step finished
            return []
        exponent = math.floor(math.log10(tokens))
        line = (f"{self._stamp(e)} [rank {e.rank}] step {int(frame.job['step'])}"
                f" loss {frame.job['loss']:.3f}"
                f" step_time {step_time:.2f}s tokens/s {tokens / 10**exponent:.2f}e{exponent}")
        if e.rank == 0:
            rng = random.Random(f"{self._seed}:grad:{int(frame.job['step'])}")
            grad = (0.8 + 0.3 * rng.random()) * (frame.job["loss"] / 2.1) ** 4
            line += f" lr 1.50e-04 grad_norm {grad:.2f}"
        return [line + "\n"]

    def _training(self, e: _Event, frame: Frame) -> list[str]:
        """Rank 0's own messages; on stderr in Python logging's format."""
        took, usual = frame.value("step_time", 0), self.cluster.scenario.base_step_seconds
        before = frame.job["loss"]
        if e.kind == "loss_spike":
            before = self.cluster.frame_at(e.time - e.time % self._loop + e.arg - 1).job["loss"]
        text = _RANK0[e.kind].format(step=int(frame.job["step"]), loss=frame.job["loss"],
                                     took=took, usual=usual, slower=took / usual - 1,
                                     arg=e.arg, before=before)
        return [f"{self._stamp(e)} {text}\n"]

    def _stamp(self, e: _Event) -> str:
        """When the line was written, as Python's logging writes it."""
        seconds, nanos = self._wall(e)
        return f"{time.strftime('%Y-%m-%d %H:%M:%S', seconds)},{nanos // 10**6:03d}"


_RANK0 = {
    "slow_step": "WARNING [rank 0] step {step} took {took:.2f}s, {slower:.0%} above the usual"
                 " {usual:.2f}s: a slow rank is holding the job back",
    "stall": "WARNING [rank 0] dataloader: no batch for 5.0s at step {step}; the input pipeline"
             " may be stalled",
    "stall_end": "INFO [rank 0] dataloader: batches flowing again after {arg:.1f}s",
    "loss_spike": "WARNING [rank 0] loss spike at step {step}: {loss:.3f} (was {before:.3f})",
    "loss_rising": "WARNING [rank 0] loss still rising at step {step}: {loss:.3f}; consider"
                   " rolling back to the last checkpoint",
    "resume": "[rank 0] workers restarted after a failure; resuming at step {step}",
    "checkpoint": "INFO [rank 0] successfully saved checkpoint from iteration {arg:7d} to"
                  " /checkpoints/iter_{arg:07d}",  # as Megatron-LM says it
}


def hung_seq(cluster: SimCluster, began: float) -> int:
    """The SeqNum of the all-reduce a hang that began at ``began`` is stuck in, from the step
    counter the metrics show frozen (the logs' watchdog lines and the dumps agree on it)."""
    step = int(cluster.frame_at(began + 0.5).job["step"])
    return COLLECTIVES_PER_STEP * step + 2


def keep_writing(writer: LogWriter, scenario_time: Callable[[], float],
                 every: float = 2.0) -> Callable[[], None]:
    """Advance ``writer`` every ``every`` seconds in a daemon thread (for `ranktop simulate`,
    which has no poll loop of its own); returns the function that stops it."""
    stopping = threading.Event()

    def run() -> None:
        while not stopping.is_set():
            try:
                writer.advance(scenario_time())
            except OSError:  # the folder went away or filled up: stop writing, quietly
                return
            stopping.wait(every)

    thread = threading.Thread(target=run, name="ranktop-simulated-logs", daemon=True)
    thread.start()

    def stop() -> None:
        stopping.set()
        thread.join(timeout=10)

    return stop
