"""Helpers of the NVML source: what an NVML error means for ranktop, field values, NVLink
rates from cumulative counters, the training ranks of the processes using each GPU, what is
kept per GPU between polls, and the calls that read each value.

Every function takes the NVML module as an argument (the real ``pynvml`` or a stand-in with
the same names) and reads constants from it with NVML's own values as defaults, since older
bindings lack some names.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import ModuleType
from typing import Any

NAN = math.nan
MIB = 1024 * 1024

# NVML's error codes (nvml.h); pynvml names them NVML_ERROR_*.
INVALID_ARGUMENT, NOT_SUPPORTED, NO_PERMISSION, DRIVER_NOT_LOADED, TIMEOUT = 2, 3, 4, 9, 10
LIBRARY_NOT_FOUND, FUNCTION_NOT_FOUND, GPU_IS_LOST = 12, 13, 15
UNINITIALIZED, LIB_RM_VERSION_MISMATCH = 1, 18

# Codes after which no call will answer until NVML is started again: the whole source fails.
WHOLE_NVML_CODES = {UNINITIALIZED, DRIVER_NOT_LOADED, LIBRARY_NOT_FOUND, LIB_RM_VERSION_MISMATCH}

# The NVML value-type enum -> the member of the value union that holds it.
VALUE_MEMBERS = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal",
                 6: "usVal"}
# NVML reports "not available" in unsigned fields as all ones.
NOT_AVAILABLE = {2**32 - 1, 2**64 - 1, 2**16 - 1}

# Why NVML could not start, said in the words of someone setting up a GPU node.
INIT_MESSAGES = {
    LIBRARY_NOT_FOUND: "the NVML library (libnvidia-ml.so.1) was not found: "
                       "no NVIDIA driver is installed here",
    DRIVER_NOT_LOADED: "the NVIDIA driver is not loaded (does nvidia-smi work here?)",
    NO_PERMISSION: "no permission to use NVML (are the /dev/nvidia* devices readable?)",
}


class Kind(Enum):
    """What a failed NVML call means for the value it was to give."""

    UNSUPPORTED = "unsupported"  # this GPU or driver cannot answer it: NaN, stop asking
    LOST = "lost"  # the GPU is gone: all its values NaN from now on
    DOWN = "down"  # NVML itself no longer answers: the poll fails
    OTHER = "other"  # this one value is NaN, and the status says why


def constant(nvml: ModuleType | Any, name: str, default: int) -> int:
    """An NVML constant, or NVML's own value of it where the bindings are too old to have it."""
    return getattr(nvml, name, default)


def error_code(nvml: ModuleType | Any, error: BaseException) -> int | None:
    """The NVML return code carried by ``error``, or None when it is no NVMLError."""
    if isinstance(error, nvml.NVMLError):
        return getattr(error, "value", None)
    return None


def classify(nvml: ModuleType | Any, error: BaseException) -> Kind:
    code = error_code(nvml, error)
    if code in (NOT_SUPPORTED, FUNCTION_NOT_FOUND):
        return Kind.UNSUPPORTED
    if code == GPU_IS_LOST:
        return Kind.LOST
    if code in WHOLE_NVML_CODES:
        return Kind.DOWN
    return Kind.OTHER


def one_line(text: object) -> str:
    return " ".join(str(text).split()) or "unknown error"


class FirstOf:
    """The first of several NVML functions that this binding and driver both have.

    A name missing from the bindings is skipped at once; a driver without the symbol answers
    FunctionNotFound, after which the next name is used for good.
    """

    def __init__(self, nvml: ModuleType | Any, names: Sequence[str]) -> None:
        self._nvml = nvml
        self._functions: list[Callable[..., Any]] = [
            getattr(nvml, name) for name in names if hasattr(nvml, name)]

    def __call__(self, *args: Any) -> Any:
        while self._functions:
            try:
                return self._functions[0](*args)
            except self._nvml.NVMLError as error:
                last = len(self._functions) == 1
                if error_code(self._nvml, error) != FUNCTION_NOT_FOUND or last:
                    raise
                self._functions.pop(0)
        raise self._nvml.NVMLError(FUNCTION_NOT_FOUND)


def field_number(value: Any) -> float:
    """A ``c_nvmlFieldValue_t``'s number, or NaN when it failed or is "not available"."""
    member = VALUE_MEMBERS.get(value.valueType)
    if value.nvmlReturn != 0 or member is None:
        return NAN
    number = getattr(value.value, member)
    if member not in ("dVal", "sllVal", "siVal") and number in NOT_AVAILABLE:
        return NAN
    return float(number)


def handle_key(handle: Any) -> int | None:
    """The address an NVML device handle points to.

    Handles are ctypes pointers, and two pointer objects to one device (the one kept from
    enumeration and the one inside an event) do not compare equal; their addresses do.
    """
    try:
        return ctypes.cast(handle, ctypes.c_void_p).value
    except (TypeError, ctypes.ArgumentError):
        return None


# -- NVLink ------------------------------------------------------------------------------


@dataclass
class NvLink:
    """One GPU's NVLink data counters: which links to ask for and the last reading.

    NVML's throughput fields are cumulative KiB per link, so a rate needs two readings; the
    time between them is NVML's own sample timestamp where it gives one, so that a cached
    value read twice is not mistaken for an idle link.
    """

    links: list[int]
    last: tuple[float, float, float] | None = None  # (tx KiB, rx KiB, seconds)
    rate: tuple[float, float] = (NAN, NAN)  # bytes/s

    def fields(self, nvml: ModuleType | Any) -> list[tuple[int, int]]:
        tx = constant(nvml, "NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX", 138)
        rx = constant(nvml, "NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX", 139)
        return [(fid, link) for link in self.links for fid in (tx, rx)]

    def update(self, values: Sequence[Any], now: float) -> tuple[int, int] | None:
        """Take one reading (the answer to ``fields``); returns (link, NVML return code) of a
        link that failed this time, or None."""
        # A link this GPU does not have, or a field this driver does not know, answers
        # NotSupported or InvalidArgument: stop asking for it, and restart the baseline.
        dropped = {v.scopeId for v in values if v.nvmlReturn in (NOT_SUPPORTED, INVALID_ARGUMENT)}
        if dropped:
            self.links = [link for link in self.links if link not in dropped]
            values = [v for v in values if v.scopeId not in dropped]
            self.last, self.rate = None, (NAN, NAN)
        failed = [v for v in values if v.nvmlReturn != 0]
        if failed:
            self.rate = (NAN, NAN)  # keep ``last``: the counters are cumulative
            return failed[0].scopeId, failed[0].nvmlReturn
        if values:
            self._advance(values, now)
        return None

    def _advance(self, values: Sequence[Any], now: float) -> None:
        tx = sum(field_number(v) for v in values[0::2])
        rx = sum(field_number(v) for v in values[1::2])
        stamps = [v.timestamp for v in values if v.timestamp > 0]
        seconds = max(stamps) / 1e6 if len(stamps) == len(values) else now
        if self.last is not None:
            elapsed = seconds - self.last[2]
            if elapsed <= 0:
                return  # no new sample since the last reading: keep the last rate
            grew = (tx - self.last[0], rx - self.last[1])
            # A counter that went back was reset (GPU reset): start again from here.
            self.rate = ((grew[0] * 1024 / elapsed, grew[1] * 1024 / elapsed)
                         if min(grew) >= 0 else (NAN, NAN))
        self.last = (tx, rx, seconds)


@dataclass
class Gpu:
    """What the NVML source keeps about one GPU between polls."""

    index: int
    handle: Any
    uuid: str = ""
    model: str = ""
    lost: bool = False
    broken: str = ""  # why it could not be opened at start, if it could not
    unsupported: set[str] = field(default_factory=set)
    nvlink: NvLink = field(default_factory=lambda: NvLink([]))
    xid: float = NAN

    def lost_message(self) -> str:
        return f"GPU {self.index} is lost (fell off the bus?)"


def nvlink_links(nvml: ModuleType | Any, handle: Any) -> list[int]:
    """The links to read: NVML's link count where it gives one, else every possible link."""
    count_field = constant(nvml, "NVML_FI_DEV_NVLINK_LINK_COUNT", 91)
    try:
        count = field_number(nvml.nvmlDeviceGetFieldValues(handle, [count_field])[0])
    except nvml.NVMLError:
        count = NAN
    if math.isnan(count):
        count = constant(nvml, "NVML_NVLINK_MAX_LINKS", 18)
    return list(range(int(count)))


# -- ranks from the processes' environment -----------------------------------------------


@dataclass
class ProcessRanks:
    """What the processes on each GPU say about their ranks (None where nothing readable)."""

    rank: list[int | None] = field(default_factory=list)
    local_rank: list[int | None] = field(default_factory=list)


def process_ranks(nvml: ModuleType | Any, handles: Sequence[Any], proc_root: Path
                  ) -> ProcessRanks:
    found = ProcessRanks()
    for handle in handles:
        env = _first_rank_environment(nvml, handle, proc_root)
        found.rank.append(_integer(env.get("RANK")))
        found.local_rank.append(_integer(env.get("LOCAL_RANK")))
    return found


def _first_rank_environment(nvml: ModuleType | Any, handle: Any, proc_root: Path
                            ) -> dict[str, str]:
    if handle is None:
        return {}
    try:
        processes = nvml.nvmlDeviceGetComputeRunningProcesses(handle)
    except Exception:  # NVMLError, or NVMLLibraryMismatchError from an old driver
        return {}
    for process in processes:
        env = read_environ(proc_root / str(process.pid) / "environ")
        if _integer(env.get("RANK")) is not None:
            return env
    return {}


def read_environ(path: Path) -> dict[str, str]:
    """RANK and LOCAL_RANK from a process's NUL-separated environment, where readable.

    Other users' processes (permission denied) and processes in another PID namespace (no
    such file) are normal: they give nothing.
    """
    try:
        raw = path.read_bytes()
    except OSError:
        return {}
    wanted = {}
    for entry in raw.split(b"\0"):
        name, _, value = entry.partition(b"=")
        if name in (b"RANK", b"LOCAL_RANK"):
            wanted[name.decode()] = value.decode("ascii", "replace")
    return wanted


def _integer(text: str | None) -> int | None:
    if text is None or not text.strip().isdecimal():
        return None
    return int(text)


# -- start and per-GPU reads ----------------------------------------------------------


def init_message(nvml: Any, error: BaseException) -> str:
    code = error_code(nvml, error)
    if code in INIT_MESSAGES:
        return INIT_MESSAGES[code]
    return f"NVML could not start: {one_line(error)}"


def readers(nvml: Any) -> list[tuple[str, Callable[[Any], float]]]:
    """Each per-GPU value with the call that reads it, converted to ranktop's units."""
    sensor = constant(nvml, "NVML_TEMPERATURE_GPU", 0)
    sm_clock = constant(nvml, "NVML_CLOCK_SM", 1)
    uncorrected = constant(nvml, "NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1)
    volatile = constant(nvml, "NVML_VOLATILE_ECC", 0)
    # The Throttle and plain Temperature names are deprecated and leave with CUDA 14.
    reasons = FirstOf(nvml, ["nvmlDeviceGetCurrentClocksEventReasons",
                                "nvmlDeviceGetCurrentClocksThrottleReasons"])
    temperature = FirstOf(nvml, ["nvmlDeviceGetTemperature", "nvmlDeviceGetTemperatureV"])
    return [
        ("gpu_util", lambda h: nvml.nvmlDeviceGetUtilizationRates(h).gpu),
        ("temperature", lambda h: temperature(h, sensor)),
        ("power", lambda h: nvml.nvmlDeviceGetPowerUsage(h) / 1000),  # mW
        ("sm_clock", lambda h: nvml.nvmlDeviceGetClockInfo(h, sm_clock)),
        ("throttle_reasons", reasons),
        ("memory_used", lambda h: nvml.nvmlDeviceGetMemoryInfo(h).used / MIB),
        ("ecc_dbe", lambda h: nvml.nvmlDeviceGetTotalEccErrors(h, uncorrected, volatile)),
    ]
