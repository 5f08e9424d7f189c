"""`ranktop simulate --profile stock` and `--profile k8s` behind a real Prometheus and a real
VictoriaMetrics: the hardware error series exist with dcgm-exporter's labels, and ranktop
reads them."""

from __future__ import annotations

import pytest
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.integration.cluster import (
    BACKENDS,
    HERE,
    Prometheus,
    Simulator,
    VictoriaMetrics,
    instant,
)
from tests.integration.conftest import BACKEND_NAMES, HIDDEN

STOCK_JOB, K8S_JOB = "integration-hardware", "integration-k8s"
RANKS = 16  # two nodes of eight
DCGM_LABELS = {"__name__", "gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname",
               "DCGM_FI_DRIVER_VERSION", "instance", "job"}
NEW_SERIES = ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
              "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER")
NOT_STOCK = ("DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
             "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_PROF_NVLINK_TX_BYTES",
             "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL")


@pytest.fixture(scope="module")
def profile_simulators():
    scenario = HERE / "scenario-hardware.toml"
    simulators = [
        Simulator(scenario, seed=9, nodes=2, extra=("--profile", "stock")),
        Simulator(scenario, seed=10, nodes=2, extra=("--profile", "k8s", "--job", K8S_JOB)),
    ]
    yield simulators
    for simulator in simulators:
        simulator.stop()


@pytest.fixture(scope="module", params=BACKEND_NAMES)
def prometheus(request, profile_simulators, tmp_path_factory):
    """Each backend in turn (the name stays: the assertions are Prometheus's)."""
    kind = BACKENDS[request.param]
    extra = {"latency_offset": HIDDEN} if kind is VictoriaMetrics else {}
    server = kind(tmp_path_factory.mktemp(f"profiles-{request.param}"),
                  [s.port for s in profile_simulators], **extra)
    try:
        for job in (STOCK_JOB, K8S_JOB):
            server.wait_for_series(f'count(training_step_seconds{{training_job="{job}"}})',
                                   RANKS)
        yield server
    finally:
        server.stop()


def stock(prometheus: Prometheus, promql: str) -> list:
    return instant(prometheus.url, promql.replace("{}", '{exported_namespace=""}'))


def on_gpu(series: list, host: str, gpu: int) -> float:
    (value,) = [float(s["value"][1]) for s in series
                if (s["metric"]["Hostname"], s["metric"]["gpu"]) == (host, str(gpu))]
    return value


def test_the_stock_error_series_exist_with_dcgm_exporters_labels(prometheus):
    for name in NEW_SERIES:
        series = stock(prometheus, f"{name}{{}}")
        assert len(series) == RANKS, name
        assert all(set(s["metric"]) == DCGM_LABELS for s in series), name
        assert {s["metric"]["DCGM_FI_DRIVER_VERSION"] for s in series} == {"575.57.08"}
    rows = stock(prometheus, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{}")
    assert on_gpu(rows, "gpu-node-000", 5) == 1  # rank 5's ECC error
    assert sum(float(s["value"][1]) for s in rows) == 1
    failed = stock(prometheus, "DCGM_FI_DEV_ROW_REMAP_FAILURE{}")
    assert on_gpu(failed, "gpu-node-001", 6) == 1  # rank 14's remap failed
    assert on_gpu(stock(prometheus, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER{}"), "gpu-node-001", 4) >= 150


def test_the_stock_xid_carries_its_code_and_message(prometheus):
    (xid,) = stock(prometheus, "DCGM_FI_DEV_XID_ERRORS{}")
    labels = xid["metric"]
    assert (labels["Hostname"], labels["gpu"], xid["value"][1]) == ("gpu-node-001", "4", "79")
    assert (labels["err_code"], labels["err_msg"]) == ("79", "GPU has fallen off the bus")


def test_the_stock_profile_leaves_out_what_default_counters_do(prometheus):
    for name in NOT_STOCK:
        assert instant(prometheus.url, f"count({name})") == [], name
    assert len(stock(prometheus, "DCGM_FI_PROF_GR_ENGINE_ACTIVE{}")) == RANKS


def test_the_k8s_profile_labels_as_behind_a_service_monitor(prometheus):
    temps = instant(prometheus.url, 'DCGM_FI_DEV_GPU_TEMP{exported_namespace="training"}')
    assert len(temps) == RANKS
    labels = temps[0]["metric"]
    assert labels["namespace"] == "gpu-operator" and labels["service"] == "nvidia-dcgm-exporter"
    assert labels["exported_pod"].startswith(f"{K8S_JOB}-worker-")
    steps = instant(prometheus.url, f'training_step_seconds{{training_job="{K8S_JOB}"}}')
    assert {s["metric"]["namespace"] for s in steps} == {"training"}


@pytest.mark.parametrize("job,selector", [(STOCK_JOB, 'exported_namespace=""'),
                                          (K8S_JOB, 'exported_namespace="training"')])
def test_ranktop_reads_the_hardware_ledger_from_either_profile(prometheus, job, selector):
    settings = load_settings(overrides={"prometheus": {
        "url": prometheus.url, "job": job, "dcgm_selector": selector, "latency_offset": "1s"}},
        environ={})
    frame = PrometheusSource(settings).poll_now()
    values = frame.values
    assert values["remapped_rows"][5] == 1 and values["row_remap_failure"][14] == 1
    assert values["pcie_replay"][12] >= 150
    assert sum(values["remapped_rows"]) == 1
    # not in the stock counters: no series, so no values at all
    assert "ecc_dbe" not in values and "nvlink_errors" not in values
    assert frame.shows["sm_active"] == "graphics engine active"  # no SM active: the fallback
    assert len([v for v in values["sm_active"] if v == v]) == RANKS
