"""`ranktop simulate`: the scrape a Prometheus would get, parsed the way Prometheus clients do."""

from __future__ import annotations

import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.exporter import (
    ExportOptions,
    MetricsRenderer,
    build_parser,
    make_server,
    render_metrics,
    simulate_main,
)
from ranktop.tui.simulator.scenario import load_scenario

from tests.serving import serve_in_thread

ROOT = Path(__file__).resolve().parents[3]
GPU_LABELS = {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"}
TRAIN_LABELS = {"training_job", "rank", "local_rank", "hostname", "gpu_uuid"}
TYPES = {
    "DCGM_FI_DEV_GPU_UTIL": "gauge", "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "gauge",
    "DCGM_FI_PROF_SM_ACTIVE": "gauge", "DCGM_FI_DEV_GPU_TEMP": "gauge",
    "DCGM_FI_DEV_POWER_USAGE": "gauge", "DCGM_FI_DEV_SM_CLOCK": "gauge",
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": "gauge", "DCGM_FI_PROF_NVLINK_TX_BYTES": "gauge",
    "DCGM_FI_PROF_NVLINK_RX_BYTES": "gauge", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": "counter",
    "DCGM_FI_DEV_FB_USED": "gauge", "DCGM_FI_DEV_FB_FREE": "gauge",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "counter", "DCGM_FI_DEV_XID_ERRORS": "gauge",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "counter",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": "counter", "DCGM_FI_DEV_ROW_REMAP_FAILURE": "gauge",
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": "counter",
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": "counter",
    "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": "counter",
    "DCGM_FI_DEV_GPU_RECOVERY_ACTION": "gauge",
    "training_step_seconds": "gauge", "training_compute_seconds": "gauge",
    "training_step": "gauge", "training_tokens_per_second": "gauge", "training_loss": "gauge",
    "training_checkpoint_step": "gauge",
}


@pytest.fixture(scope="module")
def cluster() -> SimCluster:
    return SimCluster(64, 8, 7, load_scenario())


def families(text: str) -> dict[str, list]:
    """Family name -> samples, as prometheus_client parses the text format."""
    return {f.name: (f.type, f.samples) for f in text_string_to_metric_families(text)}


def scrape(cluster: SimCluster, t: float, **options) -> dict[str, list]:
    return families(render_metrics(cluster, t, ExportOptions(**options)))


def one(parsed: dict, name: str, **labels: str):
    """The single sample of ``name`` whose labels include ``labels``."""
    found = [s for s in parsed[name][1] if labels.items() <= s.labels.items()]
    assert len(found) == 1, (name, labels, len(found))
    return found[0]


def test_every_family_has_its_type_labels_and_one_series_per_gpu(cluster):
    parsed = scrape(cluster, 40.0)
    assert {name: kind for name, (kind, _) in parsed.items()} == TYPES
    for name, (_, samples) in parsed.items():
        if name == "DCGM_FI_DEV_XID_ERRORS":
            assert samples == []  # no XID yet at t=40: absent, never 0
            continue
        if name.startswith("training_"):
            assert len(samples) == 512, name
            assert all(set(s.labels) == TRAIN_LABELS for s in samples), name
        else:  # the job's 512 GPUs, and the two of the other job on gpu-node-056
            ours = [s for s in samples if "hpc_job" not in s.labels]
            assert len(ours) == 512 and len(samples) == 514, name
            assert all(set(s.labels) == GPU_LABELS for s in ours), name
            assert all(set(s.labels) == GPU_LABELS | {"hpc_job"} for s in samples
                       if s not in ours), name
        assert all(math.isfinite(s.value) for s in samples), name


def test_without_dcgm_only_the_jobs_own_series_are_served_naming_no_gpu(cluster):
    parsed = scrape(cluster, 40.0, dcgm=False)
    assert set(parsed) == {name for name in TYPES if name.startswith("training_")}
    assert all(set(s.labels) == TRAIN_LABELS - {"gpu_uuid"}
               for _, samples in parsed.values() for s in samples)
    assert len(parsed["training_step_seconds"][1]) == 512


def test_text_format_details(cluster):
    text = render_metrics(cluster, 40.0)
    assert text.endswith("\n") and "NaN" not in text
    assert "# TYPE DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL counter\n" in text
    assert "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n" in text
    assert "# HELP DCGM_FI_PROF_SM_ACTIVE The ratio of cycles an SM has at least 1 warp " \
           "assigned.\n" in text
    assert re.search(r'^DCGM_FI_DEV_GPU_TEMP\{gpu="5",UUID="GPU-[0-9a-f-]+",'
                     r'pci_bus_id="00000000:AB:00\.0",device="nvidia5",'
                     r'modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node-004"\} \d+$',
                     text, re.M)


def test_rank_37_at_40s_is_hot_throttled_and_converted_right(cluster):
    t, rank = 40.0, cluster.rank_map.ranks[37]
    frame, parsed = cluster.frame_at(t), scrape(cluster, t)
    gpu = {"UUID": rank.uuid}
    sample = one(parsed, "DCGM_FI_DEV_GPU_TEMP", **gpu)
    assert sample.labels | gpu == {
        "gpu": "5", "UUID": rank.uuid, "pci_bus_id": "00000000:AB:00.0", "device": "nvidia5",
        "modelName": "NVIDIA H100 80GB HBM3", "Hostname": "gpu-node-004"}
    assert sample.value > 84
    assert int(one(parsed, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", **gpu).value) & 0x60 == 0x60
    assert one(parsed, "DCGM_FI_DEV_SM_CLOCK", **gpu).value < 1500
    value = frame.values
    sm = one(parsed, "DCGM_FI_PROF_SM_ACTIVE", **gpu).value
    assert sm == pytest.approx(value["sm_active"][37] / 100, abs=1e-6) and 0 < sm <= 1
    assert sm <= one(parsed, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", **gpu).value <= 1
    assert one(parsed, "DCGM_FI_DEV_POWER_USAGE", **gpu).value == pytest.approx(
        value["power"][37], abs=1e-3)
    tx = one(parsed, "DCGM_FI_PROF_NVLINK_TX_BYTES", **gpu).value
    rx = one(parsed, "DCGM_FI_PROF_NVLINK_RX_BYTES", **gpu).value
    assert tx == pytest.approx(value["nvlink_tx"][37], abs=1)
    total = one(parsed, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", **gpu).value
    assert total == pytest.approx((tx + rx) / 1048576, abs=1)  # MiB/s, not bytes
    used = one(parsed, "DCGM_FI_DEV_FB_USED", **gpu).value
    assert used + one(parsed, "DCGM_FI_DEV_FB_FREE", **gpu).value == 81559 - 552  # reserved
    assert one(parsed, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", **gpu).value == 0


def test_training_series_of_rank_37(cluster):
    t, rank = 40.0, cluster.rank_map.ranks[37]
    frame, parsed = cluster.frame_at(t), scrape(cluster, t)
    mine = {"rank": "37"}
    step = one(parsed, "training_step_seconds", **mine)
    assert step.labels == {"training_job": "llama-70b-pretrain", "rank": "37",
                           "local_rank": "5", "hostname": "gpu-node-004", "gpu_uuid": rank.uuid}
    assert step.value == pytest.approx(frame.values["step_time"][37], rel=1e-5)
    compute = one(parsed, "training_compute_seconds", **mine).value
    assert compute == pytest.approx(frame.values["compute_time"][37], rel=1e-5)
    assert one(parsed, "training_step", **mine).value == frame.job["step"]
    assert one(parsed, "training_tokens_per_second", **mine).value == pytest.approx(
        frame.job["tokens_per_s"] / 512, rel=1e-5)
    assert one(parsed, "training_loss", **mine).value == pytest.approx(frame.job["loss"], 1e-5)


NCCL_NAMES = ("nccl_collective_exec_time_microseconds", "nccl_bus_bandwidth_gbs",
              "nccl_algorithm_bandwidth_gbs")


def test_nccl_inspector_series_only_when_asked_for(cluster):
    t = 80.0  # rank 201 straggles
    assert not set(NCCL_NAMES) & set(scrape(cluster, t))
    frame, parsed = cluster.frame_at(t), scrape(cluster, t, nccl_inspector=True)
    for name in NCCL_NAMES:
        assert parsed[name][0] == "gauge" and len(parsed[name][1]) == 512
    mine = one(parsed, "nccl_collective_exec_time_microseconds", rank="201")
    assert set(mine.labels) > TRAIN_LABELS
    assert mine.labels["coll_sn"] == f"{frame.job['step']:.0f}"
    assert mine.labels["n_ranks"] == "512" and mine.labels["collective"] == "AllReduce"
    assert mine.value == pytest.approx(1e6 * frame.values["collective_time"][201], rel=1e-4)
    times = [s.value for s in parsed["nccl_collective_exec_time_microseconds"][1]]
    assert mine.value == min(times)
    bus = one(parsed, "nccl_bus_bandwidth_gbs", rank="7").value
    algbw = one(parsed, "nccl_algorithm_bandwidth_gbs", rank="7").value
    assert bus == pytest.approx(frame.values["bus_bandwidth"][7], abs=0.01)
    assert bus == pytest.approx(algbw * 2 * 511 / 512, abs=0.02)


def test_the_dead_rank_has_no_series_anywhere(cluster):
    dead = cluster.rank_map.ranks[455]
    text = render_metrics(cluster, 190.0)
    assert dead.uuid not in text and 'rank="455"' not in text
    parsed = families(text)
    assert len(parsed["DCGM_FI_DEV_GPU_TEMP"][1]) == 513  # the other job's two GPUs stay
    assert len(parsed["training_loss"][1]) == 511


def test_xid_series_only_for_the_gpu_that_had_one(cluster):
    assert scrape(cluster, 160.0)["DCGM_FI_DEV_XID_ERRORS"][1] == []
    samples = scrape(cluster, 171.0)["DCGM_FI_DEV_XID_ERRORS"][1]
    assert len(samples) == 1
    xid = samples[0]
    assert xid.value == 79 and xid.labels["UUID"] == cluster.rank_map.ranks[455].uuid
    assert xid.labels["err_code"] == "79"
    assert xid.labels["err_msg"] == "GPU has fallen off the bus"
    assert set(xid.labels) == GPU_LABELS | {"err_code", "err_msg"}


def test_options_drop_and_rename_what_they_say(cluster):
    parsed = scrape(cluster, 40.0, sm_active=False, nvlink_bytes=False,
                    hostname_label="hostname")
    assert "DCGM_FI_PROF_SM_ACTIVE" not in parsed
    assert "DCGM_FI_PROF_NVLINK_TX_BYTES" not in parsed
    assert "DCGM_FI_PROF_NVLINK_RX_BYTES" not in parsed
    assert len(parsed["DCGM_FI_PROF_GR_ENGINE_ACTIVE"][1]) == 512 + 2  # the other job's 2
    assert len(parsed["DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"][1]) == 512 + 2
    temp = one(parsed, "DCGM_FI_DEV_GPU_TEMP", UUID=cluster.rank_map.ranks[37].uuid)
    assert temp.labels["hostname"] == "gpu-node-004" and "Hostname" not in temp.labels


def test_kubernetes_labels_one_pod_per_node(cluster):
    parsed = scrape(cluster, 171.0, kubernetes=True, job="llama-70b-pretrain")
    temp = one(parsed, "DCGM_FI_DEV_GPU_TEMP", UUID=cluster.rank_map.ranks[37].uuid)
    assert temp.labels["pod"] == "llama-70b-pretrain-worker-4"
    assert temp.labels["namespace"] == "training" and temp.labels["container"]
    pods = {s.labels["pod"] for s in parsed["DCGM_FI_DEV_GPU_TEMP"][1]}
    assert len(pods) == 64 + 1  # and the other job's pod on gpu-node-056
    assert "pod" in parsed["DCGM_FI_DEV_XID_ERRORS"][1][0].labels
    assert "pod" not in parsed["training_loss"][1][0].labels


# dcgm-exporter's etc/default-counters.csv (4.5.x): every uncommented row, less the two the
# simulator leaves out (TOTAL_ENERGY_CONSUMPTION, VGPU_LICENSE_STATUS), plus the XID.
STOCK = {
    "DCGM_FI_DEV_SM_CLOCK": "gauge", "DCGM_FI_DEV_MEM_CLOCK": "gauge",
    "DCGM_FI_DEV_MEMORY_TEMP": "gauge", "DCGM_FI_DEV_GPU_TEMP": "gauge",
    "DCGM_FI_DEV_POWER_USAGE": "gauge", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": "counter",
    "DCGM_FI_DEV_GPU_UTIL": "gauge", "DCGM_FI_DEV_MEM_COPY_UTIL": "gauge",
    "DCGM_FI_DEV_ENC_UTIL": "gauge", "DCGM_FI_DEV_DEC_UTIL": "gauge",
    "DCGM_FI_DEV_XID_ERRORS": "gauge", "DCGM_FI_DEV_FB_FREE": "gauge",
    "DCGM_FI_DEV_FB_USED": "gauge", "DCGM_FI_DEV_FB_RESERVED": "gauge",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": "counter",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "counter",
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": "counter", "DCGM_FI_DEV_ROW_REMAP_FAILURE": "gauge",
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "gauge", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "gauge",
    "DCGM_FI_PROF_DRAM_ACTIVE": "gauge", "DCGM_FI_PROF_PCIE_TX_BYTES": "gauge",
    "DCGM_FI_PROF_PCIE_RX_BYTES": "gauge",
}
TRAINING = {name: kind for name, kind in TYPES.items() if name.startswith("training_")}


def test_stock_profile_exports_only_the_default_counters(cluster):
    parsed = scrape(cluster, 171.0, profile="stock")
    assert {name: kind for name, (kind, _) in parsed.items()} == STOCK | TRAINING
    sample = one(parsed, "DCGM_FI_DEV_GPU_TEMP", UUID=cluster.rank_map.ranks[37].uuid)
    assert set(sample.labels) == GPU_LABELS | {"DCGM_FI_DRIVER_VERSION"}
    xid = parsed["DCGM_FI_DEV_XID_ERRORS"][1]
    assert [(s.labels["err_code"], s.labels["err_msg"]) for s in xid] == [
        ("79", "GPU has fallen off the bus")]
    free, used, reserved = (one(parsed, f"DCGM_FI_DEV_FB_{k}", UUID=sample.labels["UUID"]).value
                            for k in ("FREE", "USED", "RESERVED"))
    assert free + used + reserved == 81559


def test_in_the_stock_profile_an_ecc_error_is_only_a_remapped_row(cluster):
    gpu = {"UUID": cluster.rank_map.ranks[128].uuid}
    before, after = (scrape(cluster, t, profile="stock") for t in (129.0, 131.0))
    assert one(before, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", **gpu).value == 0
    assert one(after, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", **gpu).value == 1
    assert one(after, "DCGM_FI_DEV_ROW_REMAP_FAILURE", **gpu).value == 0
    assert "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" not in after
    assert one(scrape(cluster, 131.0), "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", **gpu).value == 1


def test_error_counters_rise_with_their_faults(cluster):
    bad_link, bad_bus = cluster.rank_map.ranks[300].uuid, cluster.rank_map.ranks[455].uuid
    early, late = scrape(cluster, 94.0), scrape(cluster, 171.0)
    for name in ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
                 "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"):
        assert one(late, name, UUID=bad_link).value > one(early, name, UUID=bad_link).value
    replays = "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"
    assert one(late, replays, UUID=bad_bus).value >= one(early, replays, UUID=bad_bus).value + 150


def test_k8s_profile_labels_as_behind_a_service_monitor(cluster):
    parsed = scrape(cluster, 171.0, profile="k8s")
    assert "DCGM_FI_PROF_SM_ACTIVE" not in parsed  # the stock counters
    temp = one(parsed, "DCGM_FI_DEV_GPU_TEMP", UUID=cluster.rank_map.ranks[37].uuid)
    assert temp.labels["exported_pod"] == "llama-70b-pretrain-worker-4"
    assert temp.labels["exported_namespace"] == "training"
    assert temp.labels["exported_container"] == "trainer"
    # the exporter pod's own labels, as Prometheus adds them to its target
    assert temp.labels["namespace"] == "gpu-operator"
    assert temp.labels["container"] == temp.labels["service"] == "nvidia-dcgm-exporter"
    assert re.fullmatch(r"nvidia-dcgm-exporter-[a-z0-9]{5}", temp.labels["pod"])
    pods = {s.labels["pod"] for s in parsed["DCGM_FI_DEV_GPU_TEMP"][1]}
    assert len(pods) == 64  # a DaemonSet: one exporter per node
    assert "exported_pod" in parsed["DCGM_FI_DEV_XID_ERRORS"][1][0].labels
    loss = one(parsed, "training_loss", rank="37")
    assert (loss.labels["namespace"], loss.labels["pod"]) == (
        "training", "llama-70b-pretrain-worker-4")  # a PodMonitor's target labels


FOREIGN = {"training_step_duration_seconds": "gauge", "training_step_compute_seconds": "gauge",
           "training_iteration": "gauge", "train_tokens_per_sec": "gauge", "train_loss": "gauge",
           "last_checkpoint_iteration": "gauge"}


def test_foreign_job_metrics_have_their_own_names_and_labels(cluster):
    parsed = scrape(cluster, 40.0, job_metrics="foreign", job="llama")
    job_names = {name: kind for name, (kind, _) in parsed.items()
                 if not name.startswith("DCGM_")}
    assert job_names == FOREIGN
    ours = scrape(cluster, 40.0)
    for theirs, mine in (("training_step_duration_seconds", "training_step_seconds"),
                         ("training_step_compute_seconds", "training_compute_seconds")):
        step = one(parsed, theirs, rank="37")
        assert step.labels == {"job": "llama", "rank": "37", "local_rank": "5",
                               "hostname": "gpu-node-004"}
        assert step.value == one(ours, mine, rank="37").value
        assert len(parsed[theirs][1]) == 512
    assert one(parsed, "train_loss", rank="0").value == one(ours, "training_loss",
                                                             rank="0").value
    assert one(parsed, "last_checkpoint_iteration", rank="0").value == one(
        ours, "training_checkpoint_step", rank="0").value


def test_foreign_job_metrics_on_kubernetes_carry_the_pod_and_no_host(cluster):
    parsed = scrape(cluster, 40.0, job_metrics="foreign", profile="k8s", job="llama")
    step = one(parsed, "training_step_duration_seconds", rank="37")
    assert step.labels == {"job": "llama", "rank": "37", "local_rank": "5",
                           "namespace": "training", "pod": "llama-worker-4",
                           "container": "trainer"}
    temp = one(parsed, "DCGM_FI_DEV_GPU_TEMP", UUID=cluster.rank_map.ranks[37].uuid)
    assert (temp.labels["exported_pod"], temp.labels["Hostname"]) == (
        "llama-worker-4", "gpu-node-004")  # the pod joins the rank to its node


def test_job_label_is_escaped(cluster):
    parsed = scrape(cluster, 40.0, job='odd "job"\\name')
    assert one(parsed, "training_loss", rank="0").labels["training_job"] == 'odd "job"\\name'


def render_seconds(nodes: int) -> float:
    renderer = MetricsRenderer(SimCluster(nodes, 8, 7, load_scenario()))
    renderer.render(1.0)
    started = time.perf_counter()
    text = renderer.render(40.0)
    took = time.perf_counter() - started
    assert text.count("DCGM_FI_DEV_GPU_TEMP{") == nodes * 8 + 2  # the other job's GPUs
    return took


def test_a_scrape_costs_in_proportion_to_the_ranks():
    # Eight times the ranks cost about ten times as much here (caches grow too); quadratic
    # work would cost ~64 times. A ratio from one run: the machine's speed cancels out.
    small = min(render_seconds(64) for _ in range(5))
    large = min(render_seconds(512) for _ in range(5))
    assert large / small < 40


class FixedClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fetch(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read().decode()
            return response.status, response.headers["Content-Type"], body
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


def test_the_server_answers_on_an_ephemeral_port(cluster):
    clock = FixedClock()
    server = make_server(cluster, ExportOptions(), "127.0.0.1", 0, clock=clock, start=10.0)
    thread = serve_in_thread(server)
    try:
        clock.now += 30.0  # t = 10 + 30 s since the server started
        status, kind, body = fetch(server.url)
        assert status == 200 and "version=0.0.4" in kind
        temp = one(families(body), "DCGM_FI_DEV_GPU_TEMP", UUID=cluster.rank_map.ranks[37].uuid)
        assert temp.value > 84
        base = server.url.removesuffix("/metrics")
        assert fetch(base + "/")[0] == 200 and "/metrics" in fetch(base + "/")[2]
        assert fetch(base + "/nope")[0] == 404
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_a_port_in_use_exits_2_with_one_line(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert simulate_main(["--port", str(port), "--nodes", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "address already in use" in err and str(port) in err


@pytest.mark.parametrize("argv,words", [
    (["--port", "99999"], "0-65535"),
    (["--nodes", "0"], "--nodes"),
    (["--hostname-label", "HOST"], "invalid choice"),
    (["--bogus"], "unrecognized arguments"),
    (["--start", "-5"], "--start"),
    (["--demo-start", "-5"], "--demo-start"),
    (["--scenario", "/nonexistent/scenario.toml"], "cannot read"),
    (["--profile", "dcp"], "invalid choice"),
    (["--profile", "k8s", "--kubernetes"], "use one"),
    (["--job-metrics", "theirs"], "invalid choice"),
])
def test_bad_flags_exit_2_with_one_line(capsys, argv, words):
    assert simulate_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and err.startswith("ranktop simulate: ")


def test_help_exits_0(capsys):
    assert simulate_main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "ranktop simulate" in out and "--kubernetes" in out and "--no-sm-active" in out
    assert "--profile {default,stock,k8s}" in out
    assert "--job-metrics {ranktop,foreign}" in out


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_serves_until_ctrl_c_then_exits_0_quietly(stop):
    code = "import sys; from ranktop.tui.simulator.exporter import simulate_main; " \
           "sys.exit(simulate_main(['--port', '0', '--nodes', '2']))"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = proc.stdout.readline()
        match = re.fullmatch(r"serving 16 ranks on (http://127\.0\.0\.1:\d+/metrics)\n", line)
        assert match, line
        assert fetch(match[1])[0] == 200
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and "Traceback" not in err


def test_the_other_job_on_a_node_has_its_own_gpus_labelled_with_its_job_or_pod(cluster):
    # the scenario's [[tenant]]: 2 GPUs on the node of rank 455, after the job's 8
    ours = {r.uuid for r in cluster.rank_map.ranks}
    for options, labels in (({}, {"hpc_job": "eval-sweep-7"}),
                            ({"kubernetes": True}, {"pod": "eval-sweep-7",
                                                    "namespace": "research"}),
                            ({"profile": "k8s"}, {"exported_pod": "eval-sweep-7",
                                                  "exported_namespace": "research",
                                                  "namespace": "gpu-operator"})):
        parsed = scrape(cluster, 190.0, **options)  # rank 455 dead: its GPU has no series
        theirs = [s for s in parsed["DCGM_FI_DEV_GPU_TEMP"][1] if s.labels["UUID"] not in ours]
        assert [(s.labels["Hostname"], s.labels["gpu"]) for s in theirs] == [
            ("gpu-node-056", "8"), ("gpu-node-056", "9")], options
        assert all(labels.items() <= s.labels.items() for s in theirs), options
        assert len({s.labels["UUID"] for s in theirs}) == 2
        assert {s.labels["pci_bus_id"] for s in theirs}.isdisjoint(
            s.labels["pci_bus_id"] for s in parsed["DCGM_FI_DEV_GPU_TEMP"][1]
            if s.labels["Hostname"] == "gpu-node-056" and s not in theirs)


def test_the_scenario_start_is_named_as_the_consoles_demo_start_and_the_old_name_stays():
    assert build_parser().parse_args(["--demo-start", "172"]).start == 172
    assert build_parser().parse_args(["--start", "30"]).start == 30
