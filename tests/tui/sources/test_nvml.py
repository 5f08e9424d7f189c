"""The NVML source, over a fake pynvml (and once over the real one, which on a machine without
a GPU must say why, never crash)."""

from __future__ import annotations

import asyncio
import inspect
import math
import sys
from pathlib import Path

import pynvml
import pytest
from ranktop.tui.core.model import Frame, Health
from ranktop.tui.sources.nvml import (
    RANK_REFRESH_SECONDS,
    RANKS_FROM_INDEX,
    RANKS_FROM_PROCESSES,
    NvmlSource,
    NvmlUnavailable,
)

from tests.tui import fake_pynvml as fake
from tests.tui.conftest import FakeClock
from tests.tui.fake_pynvml import FakeGpu, FakeNvml

T0 = 1_800_000_000.0
GIB = 2**30


def nan(value: float) -> bool:
    return math.isnan(value)


def gpus(n: int, **values) -> list[FakeGpu]:
    return [FakeGpu(uuid=f"GPU-{i}", **values) for i in range(n)]


def source_of(nvml: FakeNvml, clock: FakeClock, tmp_path: Path | None = None) -> NvmlSource:
    proc = tmp_path / "proc" if tmp_path is not None else Path("/nonexistent/proc")
    return NvmlSource(nvml, clock=clock, hostname="gpu-node-004", proc_root=proc)


def started(n: int = 2, clock: FakeClock | None = None, **values):
    clock = clock or FakeClock(T0)
    nvml = FakeNvml(gpus(n, **values), clock=clock)
    return nvml, source_of(nvml, clock), clock


# -- values ------------------------------------------------------------------------------


def test_every_value_is_read_and_converted_to_ranktops_units():
    _, source, _ = started(2, util=87, temperature=84, power_mw=612_500, sm_clock=1410,
                                  reasons=0x40 | 0x20, memory_used=40 * GIB, ecc_dbe=2)
    frame = source.poll_now()
    assert frame.time == T0
    for metric, expected in [("gpu_util", 87), ("sm_active", 87), ("temperature", 84),
                             ("power", 612.5), ("sm_clock", 1410), ("throttle_reasons", 0x60),
                             ("memory_used", 40 * 1024), ("ecc_dbe", 2)]:
        assert frame.values[metric] == [expected, expected], metric
    assert frame.shows["sm_active"] == "GPU utilisation (NVML)"
    assert all(nan(v) for m in ("nvlink", "nvlink_tx", "nvlink_rx", "xid")
               for v in frame.values[m])  # no rate from one reading, no XID yet
    assert frame.local == frozenset({0, 1})
    assert source.name == "NVML gpu-node-004"
    assert source.job_name == "local GPUs on gpu-node-004"
    status = source.status()
    assert (status.health, status.message) == (Health.OK, "")


def test_unsupported_values_are_nan_never_zero_and_are_not_asked_again():
    unsupported = {"nvmlDeviceGetUtilizationRates", "nvmlDeviceGetTotalEccErrors",
                   "nvmlDeviceGetCurrentClocksEventReasons"}
    clock = FakeClock(T0)
    nvml = FakeNvml([FakeGpu(uuid="GPU-0", unsupported=unsupported), FakeGpu(uuid="GPU-1")],
                    clock=clock)
    source = source_of(nvml, clock)
    for _ in range(3):
        frame = source.poll_now()
    for metric in ("gpu_util", "sm_active", "ecc_dbe", "throttle_reasons"):
        assert nan(frame.values[metric][0]) and not nan(frame.values[metric][1]), metric
    assert frame.values["temperature"][0] == 65
    assert nvml.gpus[0].calls["nvmlDeviceGetTotalEccErrors"] == 1
    assert source.status().health is Health.OK  # a GPU without ECC is no fault


def test_older_bindings_and_drivers_fall_back_to_the_deprecated_names():
    clock = FakeClock(T0)
    older = FakeNvml(gpus(1, reasons=0x4, temperature=70), clock=clock,
                     without=("nvmlDeviceGetCurrentClocksEventReasons", "nvmlEventSetWait_v2"))
    older.queue_event(0, 13)  # nothing is registered yet: not delivered
    source = source_of(older, clock)
    older.queue_event(0, 31)
    frame = source.poll_now()
    assert frame.values["throttle_reasons"] == [4] and frame.values["xid"] == [31]
    # A driver without the symbol answers FunctionNotFound: the next name takes over.
    driver = FakeGpu(reasons=0x8, raise_after={
        "nvmlDeviceGetCurrentClocksEventReasons": (0, fake.NVMLError_FunctionNotFound),
        "nvmlDeviceGetTemperature": (0, fake.NVMLError_FunctionNotFound)})
    source = source_of(FakeNvml([driver], clock=clock), clock)
    frame = source.poll_now()
    assert frame.values["throttle_reasons"] == [8] and frame.values["temperature"] == [65]
    assert driver.calls["nvmlDeviceGetTemperatureV"] == 1
    assert source.status().message == ""


# -- NVLink ------------------------------------------------------------------------------


def test_nvlink_rates_come_from_the_counters_of_two_polls():
    nvml, source, clock = started(2, links=4, tx_kib_per_s=1000.0, rx_kib_per_s=250.0)
    assert all(nan(v) for v in source.poll_now().values["nvlink"])
    clock.now += 2
    frame = source.poll_now()
    assert frame.values["nvlink_tx"] == [4 * 1000 * 1024] * 2
    assert frame.values["nvlink_rx"] == [4 * 250 * 1024] * 2
    assert frame.values["nvlink"] == [4 * 1250 * 1024] * 2
    again = source.poll_now()  # the same NVML sample read twice: not an idle link
    assert again.values["nvlink"] == frame.values["nvlink"]
    fields = nvml.calls["nvmlDeviceGetFieldValues"]
    source.poll_now()
    assert nvml.calls["nvmlDeviceGetFieldValues"] == fields + 2  # one call per GPU


def test_nvlink_is_nan_without_nvlink_and_asks_only_the_links_there_are():
    clock = FakeClock(T0)
    pcie = FakeGpu(uuid="GPU-0", links=0)
    no_count = FakeGpu(uuid="GPU-1", links=2, link_count_supported=False, tx_kib_per_s=10.0)
    nvml = FakeNvml([pcie, no_count], clock=clock)
    source = source_of(nvml, clock)
    source.poll_now()
    clock.now += 1
    frame = source.poll_now()
    assert nan(frame.values["nvlink"][0])
    assert pcie.calls["nvmlDeviceGetFieldValues"] == 1  # the link count at start, then never
    assert frame.values["nvlink_tx"][1] == 2 * 10 * 1024  # links past 2 dropped after one try
    assert frame.values["nvlink_rx"][1] == 0  # an idle link is a real 0
    assert no_count.calls["nvmlDeviceGetFieldValues"] == 1 + 2
    assert source.status().health is Health.OK


def test_a_failing_nvlink_field_is_nan_and_noted_then_the_rate_resumes():
    nvml, source, clock = started(1, links=2, tx_kib_per_s=100.0)
    source.poll_now()
    nvml.gpus[0].link_returns = {1: fake.NVML_ERROR_UNKNOWN}
    clock.now += 1
    frame = source.poll_now()
    assert nan(frame.values["nvlink"][0])
    assert source.status().message == "GPU 0 NVLink link 1: Unknown Error"
    nvml.gpus[0].link_returns = {}
    clock.now += 1
    assert source.poll_now().values["nvlink_tx"] == [2 * 100 * 1024]


# -- XID and ECC -------------------------------------------------------------------------


def test_the_last_xid_of_each_gpu_is_latched():
    nvml, source, _ = started(3, ecc_dbe=0)
    nvml.queue_event(1, 48)
    nvml.queue_event(1, 79)
    frame = source.poll_now()
    assert nan(frame.values["xid"][0]) and frame.values["xid"][1] == 79
    nvml.queue_event(2, 94)
    frame = source.poll_now()
    assert frame.values["xid"][1:] == [79, 94]  # kept after the event is gone
    assert frame.values["ecc_dbe"] == [0, 0, 0]  # a real zero where ECC is counted


def test_a_gpu_that_cannot_report_events_keeps_nan_as_its_xid():
    clock = FakeClock(T0)
    nvml = FakeNvml([FakeGpu(events_supported=False), FakeGpu()], clock=clock)
    source = source_of(nvml, clock)
    nvml.queue_event(0, 79)
    nvml.queue_event(1, 43)
    frame = source.poll_now()
    assert nan(frame.values["xid"][0]) and frame.values["xid"][1] == 43


# -- failures ----------------------------------------------------------------------------


def test_a_gpu_lost_mid_session_is_nan_and_named_while_the_others_carry_on():
    nvml, source, clock = started(4, links=1, tx_kib_per_s=5.0)
    nvml.gpus[3].raise_after = {"nvmlDeviceGetPowerUsage": (1, fake.NVMLError_GpuIsLost)}
    assert source.poll_now().values["power"] == [450] * 4
    nvml.queue_event(3, 79)
    clock.now += 1
    frame = source.poll_now()
    assert all(nan(frame.values[m][3]) for m in frame.values if m != "xid")
    assert frame.values["xid"][3] == 79
    assert frame.values["temperature"][:3] == [65] * 3
    assert frame.values["nvlink_tx"][:3] == [5 * 1024] * 3
    status = source.status()
    assert (status.health, status.message) == (Health.SLOW, "GPU 3 is lost (fell off the bus?)")
    asked = sum(nvml.gpus[3].calls.values())
    source.poll_now()
    assert sum(nvml.gpus[3].calls.values()) == asked  # a lost GPU is not asked again
    assert source.status().message == "GPU 3 is lost (fell off the bus?)"


def test_an_unknown_error_on_one_call_is_nan_for_that_value_only():
    nvml, source, _ = started(2)
    nvml.gpus[0].raise_after = {"nvmlDeviceGetTemperature": (0, fake.NVMLError_Unknown)}
    frame = source.poll_now()
    assert nan(frame.values["temperature"][0]) and frame.values["temperature"][1] == 65
    assert frame.values["power"] == [450, 450]
    assert source.status().health is Health.SLOW
    assert source.status().message == "GPU 0 temperature: Unknown Error"
    nvml.gpus[0].raise_after = {}
    assert source.poll_now().values["temperature"] == [65, 65]  # asked again, and answered
    assert (source.status().health, source.status().message) == (Health.OK, "")


def test_nvml_failing_as_a_whole_fails_the_poll_with_an_error_status():
    nvml, source, _ = started(2)
    source.poll_now()
    nvml.gpus[1].raise_after = {"nvmlDeviceGetMemoryInfo": (1, fake.NVMLError_DriverNotLoaded)}
    with pytest.raises(NvmlUnavailable, match="NVML stopped answering: Driver Not Loaded"):
        source.poll_now()
    status = source.status()
    assert status.health is Health.ERROR and "Driver Not Loaded" in status.message
    assert status.last_ok == T0


@pytest.mark.parametrize(("error", "expected"), [
    (fake.NVMLError_LibraryNotFound, "the NVML library (libnvidia-ml.so.1) was not found"),
    (fake.NVMLError_DriverNotLoaded, "the NVIDIA driver is not loaded"),
    (fake.NVMLError_NoPermission, "no permission to use NVML"),
    (fake.NVMLError_Unknown, "NVML could not start: Unknown Error"),
])
def test_each_start_failure_is_one_line_saying_why(error, expected):
    nvml = FakeNvml(gpus(1), init_error=error)
    with pytest.raises(NvmlUnavailable) as raised:
        source_of(nvml, FakeClock(T0))
    assert str(raised.value).startswith(expected)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(("nvml", "expected"), [
    (FakeNvml([]), "NVML sees no GPU on this machine"),
    (FakeNvml(gpus(2), count_error=fake.NVMLError_NoPermission), "no permission to use NVML"),
    (FakeNvml(gpus(1, open_error=fake.NVMLError_NoPermission)),
     "GPU 0 cannot be opened: Insufficient Permissions"),
])
def test_no_usable_gpu_after_start_is_unavailable_and_nvml_is_let_go(nvml, expected):
    with pytest.raises(NvmlUnavailable, match=expected.replace("(", r"\(")):
        source_of(nvml, FakeClock(T0))
    assert nvml.refcount == 0


def test_missing_bindings_are_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml now raises ImportError
    with pytest.raises(NvmlUnavailable, match=r"^the NVML Python bindings are not installed$"):
        NvmlSource()


def test_the_real_pynvml_here_says_why_there_is_nothing_or_polls():
    try:
        source = NvmlSource()
    except NvmlUnavailable as error:
        message = str(error)
        assert message and "\n" not in message
        assert "NVML" in message or "NVIDIA" in message
        return
    try:  # a machine with a GPU: the real thing must poll
        frame = source.poll_now()
        assert len(frame.values["temperature"]) == len(source.rank_map)
    finally:
        source.close()


# -- ranks -------------------------------------------------------------------------------


def write_environ(tmp_path, pid: int, **env: str) -> None:
    folder = tmp_path / "proc" / str(pid)
    folder.mkdir(parents=True)
    (folder / "environ").write_bytes(
        b"\0".join(f"{k}={v}".encode() for k, v in {"PATH": "/bin", **env}.items()) + b"\0")


def test_ranks_come_from_the_environment_of_each_gpus_process(tmp_path):
    write_environ(tmp_path, 101, RANK="16", LOCAL_RANK="0")
    (tmp_path / "proc" / "202").mkdir()  # another user's process: nothing readable
    write_environ(tmp_path, 203, RANK="17", LOCAL_RANK="1")
    clock = FakeClock(T0)
    nvml = FakeNvml([FakeGpu(uuid="GPU-a", pids=[101]), FakeGpu(uuid="GPU-b", pids=[202, 203])],
                    clock=clock)
    source = source_of(nvml, clock, tmp_path)
    rank_map = source.rank_map
    assert rank_map.source == RANKS_FROM_PROCESSES == "processes' RANK environment"
    assert [(r.rank, r.host, r.gpu, r.node, r.uuid) for r in rank_map.ranks] == [
        (0, "gpu-node-004", 0, 0, "GPU-a"), (1, "gpu-node-004", 1, 0, "GPU-b")]
    assert [source.global_rank(p) for p in range(3)] == [16, 17, None]
    assert source.local_ranks == {0: 0, 1: 1}
    source.poll_now()
    assert "(GPU:RANK 0:16 1:17)" in source.status().detail


def test_ranks_fall_back_to_gpu_order_then_follow_processes_that_start_later(tmp_path):
    write_environ(tmp_path, 101, RANK="8")
    clock = FakeClock(T0)
    nvml = FakeNvml([FakeGpu(pids=[101]), FakeGpu(pids=[])], clock=clock)
    source = source_of(nvml, clock, tmp_path)
    assert source.rank_map.source == RANKS_FROM_INDEX
    assert [r.rank for r in source.rank_map.ranks] == [0, 1]
    assert source.global_rank(0) == 8 and source.global_rank(1) is None
    write_environ(tmp_path, 102, RANK="9")
    nvml.gpus[1].pids = [102]
    clock.now += RANK_REFRESH_SECONDS
    source.poll_now()
    assert source.rank_map.source == RANKS_FROM_PROCESSES
    assert source.global_ranks == {0: 8, 1: 9}


# -- lifecycle ---------------------------------------------------------------------------


def test_close_lets_nvml_go_once_and_a_poll_after_it_fails():
    nvml, source, _ = started(2)
    source.close()
    source.close()
    assert nvml.calls["nvmlShutdown"] == 1 and nvml.refcount == 0
    assert nvml.event_sets[0].freed
    with pytest.raises(NvmlUnavailable, match="closed"):
        source.poll_now()


async def test_poll_runs_in_a_thread_and_returns_a_frame():
    _, source, _ = started(2)
    frame = await asyncio.wait_for(source.poll(), timeout=5)
    assert isinstance(frame, Frame) and frame.values["temperature"] == [65, 65]


def test_a_poll_makes_one_call_of_each_kind_per_gpu():
    nvml, source, clock = started(8, links=18, tx_kib_per_s=1e6)
    source.poll_now()
    before = dict(nvml.calls)
    for _ in range(20):
        clock.now += 1
        source.poll_now()
    for function in ("nvmlDeviceGetUtilizationRates", "nvmlDeviceGetFieldValues",
                     "nvmlDeviceGetTotalEccErrors", "nvmlDeviceGetTemperature"):
        assert nvml.calls[function] - before[function] == 20 * 8, function


# -- the fake is pynvml's shape ----------------------------------------------------------


def test_the_fake_has_pynvmls_names_values_and_error_classes():
    for name in dir(fake):
        if name.startswith(("NVML_", "nvmlEventType")):
            assert getattr(pynvml, name) == getattr(fake, name), name
        if name.startswith("NVMLError_"):
            real = getattr(pynvml, name)
            assert issubclass(real, pynvml.NVMLError)
            assert real().value == getattr(fake, name)().value, name
    for name, _function in inspect.getmembers(FakeNvml, inspect.isfunction):
        if name.startswith("nvml"):
            assert callable(getattr(pynvml, name)), name
    for ours, theirs in [(fake.c_nvmlFieldValue_t, pynvml.c_nvmlFieldValue_t),
                         (fake.c_nvmlValue_t, pynvml.c_nvmlValue_t),
                         (fake.c_nvmlEventData_t, pynvml.c_nvmlEventData_t)]:
        assert [f[0] for f in ours._fields_] == [f[0] for f in theirs._fields_]
    assert type(fake.NVMLError(15)) is fake.NVMLError_GpuIsLost
    assert type(pynvml.NVMLError(15)) is pynvml.NVMLError_GpuIsLost


async def test_the_console_on_this_nodes_gpus_shows_each_gpu_and_its_throttling():
    from ranktop.tui.app.console import RanktopApp
    from ranktop.tui.settings.config import load_settings

    from tests.tui.conftest import screen_text

    clock = FakeClock(T0)
    fleet = gpus(8, temperature=64)
    fleet[5] = FakeGpu(uuid="GPU-5", temperature=88, reasons=0x40)
    nvml = FakeNvml(fleet, clock=clock)
    source = source_of(nvml, clock)
    app = RanktopApp(load_settings(environ={}), source, clock=clock, poll=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        text = screen_text(app)
        assert "local GPUs on gpu-node-004" in text and "NVML gpu-node-004" in text
        assert "ranks 8/8 up" in text
        assert "SM activity (GPU utilisation (NVML))" in text
        await pilot.press("slash", "5", "enter")
        assert "88°C" in screen_text(app) and "HW thermal" in screen_text(app)
    assert source.gpu_model(5) == "NVIDIA H100 80GB HBM3"
