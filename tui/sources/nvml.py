"""This node's GPUs through NVML (the ``nvidia-ml-py`` bindings, module ``pynvml``).

Each poll makes one pass of NVML calls per GPU. A value NVML cannot give is NaN, never 0. A
problem with one GPU (unsupported query, a failing call, a GPU fallen off the bus) never fails
the poll: it shows as NaN and in the status line. Only NVML failing as a whole does.

Ranks: the source's RankMap is dense, position p = the GPU of NVML index p, because the
heatmap needs ranks 0..n-1. The job's own (global) RANK of each GPU, read from the
environment of the processes using it, is kept apart: ``global_rank(p)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.model import MISSING, Frame, Health, Rank, RankMap, SourceStatus
from . import nvml_fields as nf
from .base import Source

METRICS = ("sm_active", "gpu_util", "temperature", "power", "sm_clock", "throttle_reasons",
           "memory_used", "nvlink", "nvlink_tx", "nvlink_rx", "ecc_dbe", "xid")
SM_ACTIVE_SHOWS = "GPU utilisation (NVML)"
RANKS_FROM_PROCESSES = "processes' RANK environment"
RANKS_FROM_INDEX = "GPU index (no rank environment readable)"
RANK_REFRESH_SECONDS = 30.0  # processes come and go: re-read their ranks this often
MAX_EVENTS_PER_POLL = 256  # a storm of events must not hold a poll up
MAX_NOTES = 3


class NvmlUnavailable(Exception):
    """Why NVML has nothing to show; its text is one line for the user."""


class _GpuLost(Exception):
    pass


class _NvmlDown(Exception):
    pass


class NvmlSource(Source):
    """The GPUs of this machine. ``nvml`` is the ``pynvml`` module (imported when None) or
    anything with its names; raises NvmlUnavailable when there is nothing to show."""

    def __init__(self, nvml: Any = None, clock: Callable[[], float] = time.time,
                 hostname: str | None = None, proc_root: Path = Path("/proc")) -> None:
        self.nvml = _bindings() if nvml is None else nvml
        self.clock = clock
        self.host = hostname or socket.gethostname()
        self.proc_root = proc_root
        self.name = f"NVML {self.host}"
        self.job_name = f"local GPUs on {self.host}"
        self.global_ranks: dict[int, int] = {}  # GPU position -> the job's RANK
        self.local_ranks: dict[int, int] = {}  # GPU position -> LOCAL_RANK
        self._closed = False
        self._events: Any = None
        self._gpus = self._start()
        self._readers = nf.readers(self.nvml)
        self._wait = nf.FirstOf(self.nvml, ["nvmlEventSetWait_v2", "nvmlEventSetWait"])
        self._watch_xids()
        self._learn_ranks(clock())
        self._status = SourceStatus(self.name, Health.STALE, since=clock(),
                                    message="waiting for the first poll", detail=self._detail())

    # -- start and stop ----------------------------------------------------------------

    def _start(self) -> list[nf.Gpu]:
        nvml = self.nvml
        try:
            nvml.nvmlInit()
        except Exception as error:  # NVMLError, or OSError / mismatch from odd installs
            raise NvmlUnavailable(nf.init_message(nvml, error)) from None
        try:
            count = nvml.nvmlDeviceGetCount()
        except nvml.NVMLError as error:
            self._shutdown()
            raise NvmlUnavailable(nf.init_message(nvml, error)) from None
        if count == 0:
            self._shutdown()
            raise NvmlUnavailable("NVML sees no GPU on this machine")
        gpus = [self._open(index) for index in range(count)]
        if all(gpu.broken for gpu in gpus):
            self._shutdown()
            raise NvmlUnavailable(gpus[0].broken)
        return gpus

    def _open(self, index: int) -> nf.Gpu:
        nvml = self.nvml
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
        except nvml.NVMLError as error:
            return nf.Gpu(index, None, broken=f"GPU {index} cannot be opened: {nf.one_line(error)}")
        gpu = nf.Gpu(index, handle, nvlink=nf.NvLink(nf.nvlink_links(nvml, handle)))
        # Without a UUID, joins to the job's ranks fall back to host and GPU index.
        with contextlib.suppress(nvml.NVMLError):
            gpu.uuid = str(nvml.nvmlDeviceGetUUID(handle))
        with contextlib.suppress(nvml.NVMLError):
            gpu.model = str(nvml.nvmlDeviceGetName(handle))
        return gpu

    def _watch_xids(self) -> None:
        """One event set for every GPU's XID critical errors; GPUs that cannot report them
        keep NaN as their XID."""
        nvml = self.nvml
        mask = nf.constant(nvml, "nvmlEventTypeXidCriticalError", 0x8)
        try:
            self._events = nvml.nvmlEventSetCreate()
        except nvml.NVMLError:
            return
        for gpu in self._gpus:
            if gpu.handle is None:
                continue
            with contextlib.suppress(nvml.NVMLError):
                nvml.nvmlDeviceRegisterEvents(gpu.handle, mask, self._events)

    def close(self) -> None:
        """Let go of NVML; safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        if self._events is not None:
            with contextlib.suppress(self.nvml.NVMLError):
                self.nvml.nvmlEventSetFree(self._events)
        self._shutdown()

    def _shutdown(self) -> None:
        # An error here means the driver went away: nothing is left to release.
        with contextlib.suppress(self.nvml.NVMLError):
            self.nvml.nvmlShutdown()

    # -- ranks -------------------------------------------------------------------------

    def global_rank(self, position: int) -> int | None:
        """The job's RANK of the process on the GPU at ``position``, when readable."""
        return self.global_ranks.get(position)

    def _learn_ranks(self, now: float) -> None:
        self._ranks_at = now
        found = nf.process_ranks(self.nvml, [g.handle for g in self._gpus], self.proc_root)
        self.global_ranks = {p: r for p, r in enumerate(found.rank) if r is not None}
        self.local_ranks = {p: r for p, r in enumerate(found.local_rank) if r is not None}
        every = len(self.global_ranks) == len(self._gpus)
        ranks = tuple(Rank(rank=p, host=self.host, gpu=g.index, node=0, uuid=g.uuid)
                      for p, g in enumerate(self._gpus))
        self.rank_map = RankMap(ranks=ranks, hosts=(self.host,), gpus_per_node=len(ranks),
                                source=RANKS_FROM_PROCESSES if every else RANKS_FROM_INDEX)

    # -- polling -----------------------------------------------------------------------

    async def poll(self) -> Frame:
        return await asyncio.to_thread(self.poll_now)

    def poll_now(self) -> Frame:
        """One blocking pass over every GPU; raises NvmlUnavailable only if NVML fails."""
        now = self.clock()
        if self._closed:
            self._fail(now, "NVML was shut down (the source is closed)")
        columns = {metric: [MISSING] * len(self._gpus) for metric in METRICS}
        notes: list[str] = []
        try:
            for position, gpu in enumerate(self._gpus):
                self._read_gpu(position, gpu, columns, notes, now)
            self._drain_xids(notes)
            if now - self._ranks_at >= RANK_REFRESH_SECONDS:
                self._learn_ranks(now)
        except _NvmlDown as down:
            self._fail(now, f"NVML stopped answering: {down}")
        for position, gpu in enumerate(self._gpus):
            columns["xid"][position] = gpu.xid
        columns["sm_active"] = list(columns["gpu_util"])  # NVML has no SM-active counter
        self._report(now, notes)
        return Frame(time=now, values=columns, shows={"sm_active": SM_ACTIVE_SHOWS},
                     local=frozenset(range(len(self._gpus))))

    def _read_gpu(self, position: int, gpu: nf.Gpu, columns: dict[str, list[float]],
                  notes: list[str], now: float) -> None:
        if gpu.broken or gpu.lost:
            notes.append(gpu.broken or gpu.lost_message())
            return
        try:
            for metric, read in self._readers:
                if metric not in gpu.unsupported:
                    columns[metric][position] = self._value(gpu, metric, read, notes)
            tx, rx = self._nvlink(gpu, notes, now)
        except _GpuLost:
            gpu.lost = True
            notes.append(gpu.lost_message())
            for series in columns.values():
                series[position] = MISSING  # drop what it gave before it went
            return
        columns["nvlink_tx"][position], columns["nvlink_rx"][position] = tx, rx
        columns["nvlink"][position] = tx + rx

    def _value(self, gpu: nf.Gpu, metric: str, read: Callable[[Any], float],
               notes: list[str]) -> float:
        try:
            return float(read(gpu.handle))
        except self.nvml.NVMLError as error:
            self._failed(gpu, metric, error, notes)
            return MISSING

    def _failed(self, gpu: nf.Gpu, what: str, error: Exception, notes: list[str]) -> None:
        kind = nf.classify(self.nvml, error)
        if kind is nf.Kind.LOST:
            raise _GpuLost
        if kind is nf.Kind.DOWN:
            raise _NvmlDown(nf.one_line(error))
        if kind is nf.Kind.UNSUPPORTED:
            gpu.unsupported.add(what)  # a capability: asking again each poll is waste
        else:
            notes.append(f"GPU {gpu.index} {what}: {nf.one_line(error)}")

    def _nvlink(self, gpu: nf.Gpu, notes: list[str], now: float) -> tuple[float, float]:
        if not gpu.nvlink.links or "nvlink" in gpu.unsupported:
            return MISSING, MISSING
        try:
            values = self.nvml.nvmlDeviceGetFieldValues(gpu.handle, gpu.nvlink.fields(self.nvml))
        except self.nvml.NVMLError as error:
            self._failed(gpu, "nvlink", error, notes)
            return MISSING, MISSING
        failed = gpu.nvlink.update(values, now)
        if failed is not None:
            error = nf.one_line(self.nvml.NVMLError(failed[1]))
            notes.append(f"GPU {gpu.index} NVLink link {failed[0]}: {error}")
        return gpu.nvlink.rate

    def _drain_xids(self, notes: list[str]) -> None:
        """Take every XID event waiting, without waiting for more (timeout 0)."""
        if self._events is None:
            return
        mask = nf.constant(self.nvml, "nvmlEventTypeXidCriticalError", 0x8)
        for _ in range(MAX_EVENTS_PER_POLL):
            try:
                event = self._wait(self._events, 0)
            except self.nvml.NVMLError as error:
                if nf.error_code(self.nvml, error) != nf.TIMEOUT:
                    self._event_failed(error, notes)
                return
            if event.eventType & mask:
                self._latch(event, notes)

    def _event_failed(self, error: Exception, notes: list[str]) -> None:
        kind = nf.classify(self.nvml, error)
        if kind is nf.Kind.DOWN:
            raise _NvmlDown(nf.one_line(error))
        if kind is nf.Kind.UNSUPPORTED:
            self._events = None  # this driver cannot wait for events: stop trying
        else:
            notes.append(f"XID events: {nf.one_line(error)}")

    def _latch(self, event: Any, notes: list[str]) -> None:
        gpu = self._gpu_of(event.device)
        if gpu is None:
            notes.append(f"XID {event.eventData} on a GPU NVML cannot name")
        else:
            gpu.xid = float(event.eventData)

    def _gpu_of(self, device: Any) -> nf.Gpu | None:
        key = nf.handle_key(device)
        for gpu in self._gpus:
            if gpu.handle is not None and key is not None and nf.handle_key(gpu.handle) == key:
                return gpu
        try:
            uuid = self.nvml.nvmlDeviceGetUUID(device)
        except self.nvml.NVMLError:
            return None
        return next((g for g in self._gpus if g.uuid and g.uuid == uuid), None)

    # -- status ------------------------------------------------------------------------

    def gpu_model(self, position: int) -> str:
        """The GPU's product name, as NVML gives it ("" if it would not say)."""
        return self._gpus[position].model if 0 <= position < len(self._gpus) else ""

    def status(self) -> SourceStatus:
        return self._status

    def _report(self, now: float, notes: list[str]) -> None:
        health = Health.SLOW if notes else Health.OK  # SLOW: partial, as for Prometheus
        message = "; ".join(notes[:MAX_NOTES])
        if len(notes) > MAX_NOTES:
            message += f" (+{len(notes) - MAX_NOTES} more)"
        since = self._status.since if self._status.health is health else now
        self._status = SourceStatus(self.name, health, since=since, message=message,
                                    last_ok=now, detail=self._detail())

    def _fail(self, now: float, message: str) -> None:
        since = self._status.since if self._status.health is Health.ERROR else now
        self._status = SourceStatus(self.name, Health.ERROR, since=since, message=message,
                                    last_ok=self._status.last_ok, detail=self._status.detail)
        raise NvmlUnavailable(message)

    def _detail(self) -> str:
        detail = f"{len(self._gpus)} GPUs, ranks from {self.rank_map.source}"
        if self.global_ranks:
            pairs = " ".join(f"{self._gpus[p].index}:{r}" for p, r in
                             sorted(self.global_ranks.items()))
            detail += f" (GPU:RANK {pairs})"
        return detail


def _bindings() -> Any:
    try:
        import pynvml
    except ImportError:
        raise NvmlUnavailable("the NVML Python bindings are not installed") from None
    return pynvml
