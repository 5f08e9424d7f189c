"""A stand-in for the ``pynvml`` module with the functions and constants ranktop uses.

Names, values, error classes and return shapes follow nvidia-ml-py's ``pynvml.py`` (a test
checks them against the installed module): device handles and event data are ctypes objects,
field values are ``c_nvmlFieldValue_t``-shaped ctypes structures, and every error is an
``NVMLError`` subclass named and numbered as pynvml names them (``NVMLError_GpuIsLost``...).

Each GPU is a ``FakeGpu`` whose values, unsupported calls, scheduled errors, NVLink counters,
XID events and processes a test sets.
"""

from __future__ import annotations

import ctypes
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

NVML_SUCCESS = 0
NVML_TEMPERATURE_GPU = 0
NVML_CLOCK_SM = 1
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_VOLATILE_ECC = 0
NVML_NVLINK_MAX_LINKS = 36
NVML_FI_DEV_NVLINK_LINK_COUNT = 91
NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138
NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139
NVML_VALUE_TYPE_UNSIGNED_INT = 1
NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3
nvmlEventTypeXidCriticalError = 0x0000000000000008

# code: (NVML_ERROR_* suffix, pynvml's message)
ERRORS = {
    1: ("UNINITIALIZED", "Uninitialized"), 2: ("INVALID_ARGUMENT", "Invalid Argument"),
    3: ("NOT_SUPPORTED", "Not Supported"), 4: ("NO_PERMISSION", "Insufficient Permissions"),
    5: ("ALREADY_INITIALIZED", "Already Initialized"), 6: ("NOT_FOUND", "Not Found"),
    7: ("INSUFFICIENT_SIZE", "Insufficient Size"),
    8: ("INSUFFICIENT_POWER", "Insufficient External Power"),
    9: ("DRIVER_NOT_LOADED", "Driver Not Loaded"), 10: ("TIMEOUT", "Timeout"),
    11: ("IRQ_ISSUE", "Interrupt Request Issue"),
    12: ("LIBRARY_NOT_FOUND", "NVML Shared Library Not Found"),
    13: ("FUNCTION_NOT_FOUND", "Function Not Found"),
    14: ("CORRUPTED_INFOROM", "Corrupted infoROM"), 15: ("GPU_IS_LOST", "GPU is lost"),
    16: ("RESET_REQUIRED", "GPU requires restart"),
    17: ("OPERATING_SYSTEM", "The operating system has blocked the request."),
    18: ("LIB_RM_VERSION_MISMATCH", "RM has detected an NVML/RM version mismatch."),
    19: ("IN_USE", ""), 20: ("MEMORY", "Insufficient Memory"), 21: ("NO_DATA", ""),
    22: ("VGPU_ECC_NOT_SUPPORTED", ""), 23: ("INSUFFICIENT_RESOURCES", ""),
    24: ("FREQ_NOT_SUPPORTED", ""), 25: ("ARGUMENT_VERSION_MISMATCH", ""),
    26: ("DEPRECATED", ""), 27: ("NOT_READY", ""), 28: ("GPU_NOT_FOUND", ""),
    29: ("INVALID_STATE", ""), 30: ("RESET_TYPE_NOT_SUPPORTED", ""),
    999: ("UNKNOWN", "Unknown Error"),
}


class NVMLError(Exception):
    """``NVMLError(code)`` becomes the subclass for ``code``, as in pynvml."""

    _valClassMapping: dict[int, type[NVMLError]] = {}

    def __new__(cls, value: int) -> NVMLError:
        if cls is NVMLError:
            cls = NVMLError._valClassMapping.get(value, cls)
        error = Exception.__new__(cls)
        error.value = value
        return error

    def __str__(self) -> str:
        return ERRORS.get(self.value, ("", ""))[1] or f"NVML Error with code {self.value}"


def _error_class(suffix: str, code: int) -> type[NVMLError]:
    name = "NVMLError_" + "".join(part.capitalize() for part in suffix.split("_"))

    def new(cls: type, *args: Any) -> NVMLError:
        return NVMLError.__new__(cls, code)

    return type(name, (NVMLError,), {"__new__": new, "__module__": __name__})


for _code, (_suffix, _) in ERRORS.items():
    globals()[f"NVML_ERROR_{_suffix}"] = _code
    _class = _error_class(_suffix, _code)
    globals()[_class.__name__] = _class
    NVMLError._valClassMapping[_code] = _class

# Named here for tests and linters; the loop above made them.
(NVMLError_Uninitialized, NVMLError_InvalidArgument, NVMLError_NotSupported,
 NVMLError_NoPermission, NVMLError_DriverNotLoaded, NVMLError_Timeout, NVMLError_LibraryNotFound,
 NVMLError_FunctionNotFound, NVMLError_GpuIsLost, NVMLError_Unknown) = (
    NVMLError._valClassMapping[code] for code in (1, 2, 3, 4, 9, 10, 12, 13, 15, 999))
NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_NOT_SUPPORTED = 2, 3


class c_nvmlValue_t(ctypes.Union):
    _fields_ = [("dVal", ctypes.c_double), ("uiVal", ctypes.c_uint), ("ulVal", ctypes.c_ulong),
                ("ullVal", ctypes.c_ulonglong), ("sllVal", ctypes.c_longlong),
                ("siVal", ctypes.c_int), ("usVal", ctypes.c_ushort)]


class c_nvmlFieldValue_t(ctypes.Structure):
    _fields_ = [("fieldId", ctypes.c_uint32), ("scopeId", ctypes.c_uint32),
                ("timestamp", ctypes.c_int64), ("latencyUsec", ctypes.c_int64),
                ("valueType", ctypes.c_uint), ("nvmlReturn", ctypes.c_uint),
                ("value", c_nvmlValue_t)]


class _Device(ctypes.Structure):
    _fields_ = [("index", ctypes.c_uint)]


class c_nvmlEventData_t(ctypes.Structure):
    _fields_ = [("device", ctypes.POINTER(_Device)), ("eventType", ctypes.c_ulonglong),
                ("eventData", ctypes.c_ulonglong), ("gpuInstanceId", ctypes.c_uint),
                ("computeInstanceId", ctypes.c_uint)]


@dataclass
class FakeGpu:
    """One GPU: what it answers, and how it misbehaves."""

    uuid: str = "GPU-00000000-0000-0000-0000-000000000000"
    name: str = "NVIDIA H100 80GB HBM3"
    util: int = 90
    temperature: int = 65
    power_mw: int = 450_000
    sm_clock: int = 1980
    reasons: int = 0
    memory_used: int = 40 * 2**30
    memory_total: int = 80 * 2**30
    ecc_dbe: int = 0
    links: int = 18  # NVLink links; 0: a PCIe-only GPU
    tx_kib_per_s: float = 0.0  # per link
    rx_kib_per_s: float = 0.0
    link_count_supported: bool = True
    link_returns: dict[int, int] = field(default_factory=dict)  # link -> nvmlReturn
    pids: list[int] = field(default_factory=list)
    events_supported: bool = True
    unsupported: set[str] = field(default_factory=set)  # function names: NotSupported
    # function name -> (calls that succeed first, error class raised after them)
    raise_after: dict[str, tuple[int, type[NVMLError]]] = field(default_factory=dict)
    lost: bool = False  # every call raises GpuIsLost
    open_error: type[NVMLError] | None = None  # nvmlDeviceGetHandleByIndex raises it
    calls: Counter[str] = field(default_factory=Counter)


class _EventSet:
    def __init__(self) -> None:
        self.masks: dict[int, int] = {}  # GPU index -> registered event types
        self.queue: list[tuple[int, int, int]] = []  # (GPU index, event type, data)
        self.freed = False


class FakeNvml:
    """The pynvml names ranktop calls, over ``gpus``. ``init_error`` and ``count_error`` make
    nvmlInit / nvmlDeviceGetCount raise; ``without`` hides functions, as older bindings lack
    them."""

    def __init__(self, gpus: list[FakeGpu], clock: Callable[[], float] = time.time,
                 init_error: type[NVMLError] | None = None,
                 count_error: type[NVMLError] | None = None, without: tuple[str, ...] = ()
                 ) -> None:
        self.gpus = gpus
        self.clock = clock
        self.started = clock()
        self.init_error, self.count_error = init_error, count_error
        self.without = set(without)
        self.refcount = 0
        self.calls: Counter[str] = Counter()
        self.event_sets: list[_EventSet] = []
        self._devices = [_Device(index) for index in range(len(gpus))]

    def __getattribute__(self, name: str) -> Any:
        if name != "without" and name in object.__getattribute__(self, "without"):
            raise AttributeError(name)
        return object.__getattribute__(self, name)

    # -- test controls -------------------------------------------------------------------

    def queue_event(self, index: int, xid: int,
                    event_type: int = nvmlEventTypeXidCriticalError) -> None:
        """An event from GPU ``index``, seen by every event set it is registered in."""
        for events in self.event_sets:
            if events.masks.get(index, 0) & event_type and not events.freed:
                events.queue.append((index, event_type, xid))

    # -- lifecycle -----------------------------------------------------------------------

    def nvmlInit(self) -> None:
        self.calls["nvmlInit"] += 1
        if self.init_error is not None:
            raise self.init_error()
        self.refcount += 1

    def nvmlShutdown(self) -> None:
        self.calls["nvmlShutdown"] += 1
        self._initialised()
        self.refcount -= 1

    def nvmlDeviceGetCount(self) -> int:
        self._initialised()
        if self.count_error is not None:
            raise self.count_error()
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        self._initialised()
        if not 0 <= index < len(self.gpus):
            raise NVMLError_InvalidArgument()
        if self.gpus[index].open_error is not None:
            raise self.gpus[index].open_error()
        return ctypes.pointer(self._devices[index])

    # -- per-device reads ----------------------------------------------------------------

    def nvmlDeviceGetUUID(self, handle: Any) -> str:
        return self._gpu(handle, "nvmlDeviceGetUUID").uuid

    def nvmlDeviceGetName(self, handle: Any) -> str:
        return self._gpu(handle, "nvmlDeviceGetName").name

    def nvmlDeviceGetUtilizationRates(self, handle: Any) -> Any:
        gpu = self._gpu(handle, "nvmlDeviceGetUtilizationRates")
        return SimpleNamespace(gpu=gpu.util, memory=gpu.util // 2)

    def nvmlDeviceGetTemperature(self, handle: Any, sensor: int) -> int:
        return self._temperature(handle, sensor, "nvmlDeviceGetTemperature")

    def nvmlDeviceGetTemperatureV(self, handle: Any, sensor: int) -> int:
        return self._temperature(handle, sensor, "nvmlDeviceGetTemperatureV")

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> int:
        return self._gpu(handle, "nvmlDeviceGetPowerUsage").power_mw

    def nvmlDeviceGetClockInfo(self, handle: Any, clock_type: int) -> int:
        gpu = self._gpu(handle, "nvmlDeviceGetClockInfo")
        if clock_type != NVML_CLOCK_SM:
            raise NVMLError_InvalidArgument()
        return gpu.sm_clock

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: Any) -> int:
        return self._gpu(handle, "nvmlDeviceGetCurrentClocksEventReasons").reasons

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: Any) -> int:
        return self._gpu(handle, "nvmlDeviceGetCurrentClocksThrottleReasons").reasons

    def nvmlDeviceGetMemoryInfo(self, handle: Any, version: int | None = None) -> Any:
        gpu = self._gpu(handle, "nvmlDeviceGetMemoryInfo")
        return SimpleNamespace(total=gpu.memory_total, used=gpu.memory_used,
                               free=gpu.memory_total - gpu.memory_used)

    def nvmlDeviceGetTotalEccErrors(self, handle: Any, error_type: int, counter_type: int
                                    ) -> int:
        gpu = self._gpu(handle, "nvmlDeviceGetTotalEccErrors")
        if (error_type, counter_type) != (NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC):
            raise NVMLError_InvalidArgument()  # the fake knows only the count ranktop reads
        return gpu.ecc_dbe

    def nvmlDeviceGetFieldValues(self, handle: Any, field_ids: list[Any]) -> Any:
        gpu = self._gpu(handle, "nvmlDeviceGetFieldValues")
        values = (c_nvmlFieldValue_t * len(field_ids))()
        for value, wanted in zip(values, field_ids, strict=True):
            value.fieldId, value.scopeId = wanted if isinstance(wanted, tuple) else (wanted, 0)
            self._fill(gpu, value)
        return values

    def nvmlDeviceGetComputeRunningProcesses(self, handle: Any) -> list[Any]:
        gpu = self._gpu(handle, "nvmlDeviceGetComputeRunningProcesses")
        return [SimpleNamespace(pid=pid, usedGpuMemory=2**30, gpuInstanceId=0xFFFFFFFF,
                                computeInstanceId=0xFFFFFFFF) for pid in gpu.pids]

    # -- events --------------------------------------------------------------------------

    def nvmlEventSetCreate(self) -> _EventSet:
        self._initialised()
        self.event_sets.append(_EventSet())
        return self.event_sets[-1]

    def nvmlDeviceRegisterEvents(self, handle: Any, event_types: int, events: _EventSet
                                 ) -> None:
        gpu = self._gpu(handle, "nvmlDeviceRegisterEvents")
        if not gpu.events_supported:
            raise NVMLError_NotSupported()
        index = handle.contents.index
        events.masks[index] = events.masks.get(index, 0) | event_types

    def nvmlEventSetWait_v2(self, events: _EventSet, timeout_ms: int) -> Any:
        return self._wait(events, "nvmlEventSetWait_v2")

    def nvmlEventSetWait(self, events: _EventSet, timeout_ms: int) -> Any:
        return self._wait(events, "nvmlEventSetWait")

    def nvmlEventSetFree(self, events: _EventSet) -> None:
        self._initialised()
        events.freed = True

    # -- internals -----------------------------------------------------------------------

    def _initialised(self) -> None:
        if self.refcount <= 0:
            raise NVMLError_Uninitialized()

    def _gpu(self, handle: Any, function: str) -> FakeGpu:
        self.calls[function] += 1
        self._initialised()
        gpu = self.gpus[handle.contents.index]
        gpu.calls[function] += 1
        if gpu.lost:
            raise NVMLError_GpuIsLost()
        if function in gpu.unsupported:
            raise NVMLError_NotSupported()
        if function in gpu.raise_after:
            good_calls, error = gpu.raise_after[function]
            if gpu.calls[function] > good_calls:
                raise error()
        return gpu

    def _wait(self, events: _EventSet, function: str) -> Any:
        self.calls[function] += 1
        self._initialised()
        if not events.queue:
            raise NVMLError_Timeout()
        index, event_type, data = events.queue.pop(0)
        # A fresh pointer to the device, as NVML gives: equal address, not an equal object.
        return c_nvmlEventData_t(ctypes.pointer(self._devices[index]), event_type, data,
                                 0xFFFFFFFF, 0xFFFFFFFF)

    def _temperature(self, handle: Any, sensor: int, function: str) -> int:
        gpu = self._gpu(handle, function)
        if sensor != NVML_TEMPERATURE_GPU:
            raise NVMLError_InvalidArgument()
        return gpu.temperature

    def _fill(self, gpu: FakeGpu, value: Any) -> None:
        value.timestamp = int(self.clock() * 1e6)
        if value.fieldId == NVML_FI_DEV_NVLINK_LINK_COUNT and gpu.link_count_supported:
            value.valueType, value.value.uiVal = NVML_VALUE_TYPE_UNSIGNED_INT, gpu.links
            return
        rates = {NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX: gpu.tx_kib_per_s,
                 NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX: gpu.rx_kib_per_s}
        if value.fieldId not in rates or gpu.links == 0:
            value.nvmlReturn = NVML_ERROR_NOT_SUPPORTED
            return
        if value.scopeId >= gpu.links:
            value.nvmlReturn = NVML_ERROR_INVALID_ARGUMENT  # no such link on this GPU
            return
        value.nvmlReturn = gpu.link_returns.get(value.scopeId, NVML_SUCCESS)
        value.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG
        # Cumulative KiB since the fake started, as NVML's counters are.
        value.value.ullVal = int(rates[value.fieldId] * (self.clock() - self.started))


# The module's constants and error classes, reachable from a FakeNvml as from pynvml.
for _name, _value in list(globals().items()):
    if _name.startswith(("NVML", "nvmlEventType")):
        setattr(FakeNvml, _name, _value)
