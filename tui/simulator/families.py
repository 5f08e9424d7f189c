"""What `ranktop simulate` exports: every metric family, and which ones each profile serves.

Names, types and help texts are dcgm-exporter's (``etc/default-counters.csv`` and its field
table); each family says which Frame metric feeds it and how the value is converted.

Profiles:
  default  everything ranktop reads, as a cluster with a custom collectors CSV exports it:
           SM activity, NVLink bytes, the throttle bitmask, the ECC counter, and the error
           counters (remapped rows, PCIe replays, NVLink CRC errors and replays) and the
           GPU's recovery action (DCGM field 1523)
  stock    only the rows dcgm-exporter's default-counters.csv turns on: no SM activity, NVLink
           only as DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL, no throttle bitmask, no ECC counter (an
           uncorrectable error shows only as a remapped row), the driver version as a label.
           Left out of that CSV's rows: DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (the simulator
           keeps no energy integral) and DCGM_FI_DEV_VGPU_LICENSE_STATUS (blank without vGPU,
           so dcgm-exporter skips it)
  k8s      stock, as a Prometheus behind a ServiceMonitor stores it (see exporter.py)

With ``--nccl-inspector``, NCCL's Inspector plugin's per-rank collective timings as well
(NCCL_FAMILIES), as its Prometheus dump through node_exporter's textfile collector has them.

The job's own metrics follow ranktop's convention (``training_*``) or, with
``--job-metrics foreign``, names of the job's own choosing (the FOREIGN_* families).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

MIB = 1048576.0
FB_TOTAL_MIB = 81559.0
FB_RESERVED_MIB = 552.0  # held by the driver; total = used + free + reserved
GR_OVER_SM = 1.04  # the graphics engine is busy a little more often than the SMs are
MEM_CLOCK_MHZ = 2619.0  # H100 SXM HBM3
HBM_ABOVE_GPU_C = 4.0  # the memory runs a little warmer than the GPU core
DRIVER_VERSION = "575.57.08"  # a CUDA 12.9 driver, as the ranks' NCCL logs say
PROFILES = ("default", "stock", "k8s")
JOB_METRIC_NAMES = ("ranktop", "foreign")


@dataclass(frozen=True)
class Family:
    """One exported metric: name, type, help, which Frame metric feeds it, and how."""

    name: str
    kind: str
    help: str
    key: str
    spec: str = ".0f"  # format spec of the value
    convert: Callable[[float], float] | None = None


def _share_of_sm(share: float) -> Callable[[float], float]:
    """A ratio that follows SM activity (in %), as the tensor and DRAM pipes do."""
    return lambda v: min(1.0, share * v / 100.0)


def _constant(value: float) -> Callable[[float], float]:
    return lambda v: value


DCGM_FAMILIES = (  # every DCGM family the simulator can serve
    Family("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", "sm_clock"),
    Family("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", "sm_clock",
           convert=_constant(MEM_CLOCK_MHZ)),
    Family("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", "temperature",
           convert=lambda v: v + HBM_ABOVE_GPU_C),
    Family("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", "temperature"),
    Family("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", "power", ".3f"),
    Family("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.",
           "pcie_replay"),
    Family("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", "gpu_util"),
    Family("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", "sm_active",
           convert=lambda v: 0.45 * v),
    Family("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", "gpu_util",
           convert=_constant(0.0)),
    Family("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", "gpu_util",
           convert=_constant(0.0)),
    Family("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", "memory_used",
           convert=lambda v: FB_TOTAL_MIB - FB_RESERVED_MIB - v),
    Family("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", "memory_used"),
    Family("DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).",
           "memory_used", convert=_constant(FB_RESERVED_MIB)),
    Family("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter",
           "Total number of double-bit volatile ECC errors.", "ecc_dbe"),
    Family("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter",
           "Total number of NVLink flow-control CRC errors.", "nvlink_errors"),
    Family("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter",
           "Total number of NVLink retries.", "nvlink_replay"),
    Family("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter",
           "Total number of NVLink bandwidth counters for all lanes.", "nvlink", ".0f",
           lambda v: v / MIB),  # typed counter by dcgm-exporter, but a MiB/s rate
    Family("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter",
           "Number of remapped rows for uncorrectable errors", "remapped_rows"),
    Family("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter",
           "Number of remapped rows for correctable errors", "remapped_rows_correctable"),
    Family("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed",
           "row_remap_failure"),
    Family("DCGM_FI_DEV_GPU_RECOVERY_ACTION", "gauge",
           "Recovery action the GPU asks for (NVML: 0 none, 1 reset, 2 node reboot, "
           "3 drain P2P, 4 drain and reset).", "recovery_action"),
    Family("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge",
           "Ratio of time the graphics engine is active.", "sm_active", ".6f",
           lambda v: max(v / 100.0, min(1.0, v * GR_OVER_SM / 100.0))),
    Family("DCGM_FI_PROF_SM_ACTIVE", "gauge",
           "The ratio of cycles an SM has at least 1 warp assigned.", "sm_active", ".6f",
           lambda v: v / 100.0),
    Family("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
           "Ratio of cycles the tensor (HMMA) pipe is active.", "sm_active", ".6f",
           _share_of_sm(0.7)),
    Family("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface "
           "is active sending or receiving data.", "sm_active", ".6f", _share_of_sm(0.5)),
    Family("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe "
           "bus - including both protocol headers and data payloads - in bytes per second.",
           "sm_active", ".0f", lambda v: 4e6 * v),
    Family("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe "
           "bus - including both protocol headers and data payloads - in bytes per second.",
           "sm_active", ".0f", lambda v: 1.6e7 * v),
    Family("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", "Current clock throttle reasons.",
           "throttle_reasons"),
    Family("DCGM_FI_PROF_NVLINK_TX_BYTES", "gauge", "The number of bytes of active NvLink tx "
           "(transmit) data including both header and payload.", "nvlink_tx"),
    Family("DCGM_FI_PROF_NVLINK_RX_BYTES", "gauge", "The number of bytes of active NvLink rx "
           "(read) data including both header and payload.", "nvlink_rx"),
)
FAMILIES = {family.name: family for family in DCGM_FAMILIES}

# Per profile, in the order it exports them (XID comes separately: it carries labels).
DEFAULT_NAMES = (
    "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE",
    "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_PROF_NVLINK_TX_BYTES",
    "DCGM_FI_PROF_NVLINK_RX_BYTES", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
    "DCGM_FI_DEV_GPU_RECOVERY_ACTION",
)
STOCK_NAMES = (  # default-counters.csv's uncommented rows, in its order
    "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP",
    "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
    "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_ENC_UTIL",
    "DCGM_FI_DEV_DEC_UTIL", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_FB_RESERVED", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_PCIE_TX_BYTES",
    "DCGM_FI_PROF_PCIE_RX_BYTES",
)
# default-counters.csv's "label" row: a label on every DCGM series of the stock profiles.
STOCK_LABELS = (("DCGM_FI_DRIVER_VERSION", DRIVER_VERSION),)

XID_FAMILY = Family("DCGM_FI_DEV_XID_ERRORS", "gauge",
                    "Value of the last XID error encountered.", "xid")
XID_MESSAGES = {  # dcgm-exporter's err_msg for the XIDs a training fleet pages on
    48: "Double Bit ECC Error", 63: "ECC page retirement or row remapping recording event",
    64: "ECC page retirement or row remapper recording failure", 74: "NVLINK Error",
    79: "GPU has fallen off the bus", 92: "High single-bit ECC error rate",
    94: "Contained ECC error", 95: "Uncontained ECC error",
}
XID_UNKNOWN = "Unknown Error"

TRAINING_FAMILIES = (
    Family("training_step_seconds", "gauge",
           "Duration of the last completed training step (in s).", "step_time", ".6g"),
    Family("training_compute_seconds", "gauge",
           "Time of the last completed step spent outside collectives (in s).", "compute_time",
           ".6g"),
)
JOB_FAMILIES = (  # job-wide values, exported by every live rank
    Family("training_step", "gauge", "Current training step number.", "step"),
    Family("training_tokens_per_second", "gauge",
           "Tokens per second of the job divided by its number of ranks.", "tokens_per_s", ".6g"),
    Family("training_loss", "gauge", "Training loss of the job.", "loss", ".6g"),
    Family("training_checkpoint_step", "gauge", "Step of the job's last saved checkpoint.",
           "checkpoint_step"),
)


# --job-metrics foreign: a job that names its metrics its own way (and labels them job, rank,
# local_rank, hostname or pod), as a real cluster's does; ranktop must find them.
FOREIGN_TRAINING_FAMILIES = (
    Family("training_step_duration_seconds", "gauge", "Wall time of the last training step.",
           "step_time", ".6g"),
    Family("training_step_compute_seconds", "gauge",
           "Time of the last training step spent computing.", "compute_time", ".6g"),
)
FOREIGN_JOB_FAMILIES = (
    Family("training_iteration", "gauge", "Iterations completed.", "step"),
    Family("train_tokens_per_sec", "gauge", "Tokens per second processed by this rank.",
           "tokens_per_s", ".6g"),
    Family("train_loss", "gauge", "Loss of the last iteration.", "loss", ".6g"),
    Family("last_checkpoint_iteration", "gauge", "Iteration of the last saved checkpoint.",
           "checkpoint_step"),
)

def nccl_families(n_ranks: int) -> tuple[Family, ...]:
    """NCCL Inspector's families (ext-profiler/inspector): one series per rank, collective
    and dump. The collectives are all-reduces, whose bus bandwidth is the algorithm
    bandwidth times 2(n-1)/n."""
    algbw_share = n_ranks / (2 * (n_ranks - 1)) if n_ranks > 1 else 1.0
    return (
        Family("nccl_collective_exec_time_microseconds", "gauge",
               "Execution time of the collective (in us).", "collective_time", ".1f",
               lambda v: v * 1e6),
        Family("nccl_bus_bandwidth_gbs", "gauge", "Bus bandwidth of the collective (in GB/s).",
               "bus_bandwidth", ".2f"),
        Family("nccl_algorithm_bandwidth_gbs", "gauge",
               "Algorithm bandwidth of the collective (in GB/s).", "bus_bandwidth", ".2f",
               lambda v: v * algbw_share),
    )


def job_families(names: str) -> tuple[tuple[Family, ...], tuple[Family, ...]]:
    """The per-rank and the job-wide families of the job's own metrics, by naming."""
    if names == "foreign":
        return FOREIGN_TRAINING_FAMILIES, FOREIGN_JOB_FAMILIES
    return TRAINING_FAMILIES, JOB_FAMILIES


def dcgm_families(profile: str, sm_active: bool = True, nvlink_bytes: bool = True
                  ) -> list[Family]:
    """The DCGM families a profile exports, less those switched off."""
    names = DEFAULT_NAMES if profile == "default" else STOCK_NAMES
    left_out = set() if sm_active else {"DCGM_FI_PROF_SM_ACTIVE"}
    if not nvlink_bytes:
        left_out |= {"DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES"}
    return [FAMILIES[name] for name in names if name not in left_out]
