"""Facts about GPUs, dcgm-exporter and anomalies that several parts of ranktop need: one home
for each, so the detectors, the sources, the simulator and the screens never disagree."""

from __future__ import annotations

from .xid import UNKNOWN_MEANING, XIDS

# -- severities, most severe first --------------------------------------------------------
SEVERITIES = ("critical", "major", "warning")

# -- clock throttle (NVML "clocks event") reasons, as dcgm-exporter's bit mask -------------
THROTTLE_BITS = (
    (0x001, "idle"),
    (0x002, "clocks setting"),
    (0x004, "SW power cap"),
    (0x008, "HW slowdown"),
    (0x010, "sync boost"),
    (0x020, "SW thermal"),
    (0x040, "HW thermal"),
    (0x080, "power brake"),
    (0x100, "display clocks"),
    (0x200, "board limit"),
    (0x400, "reliability"),
)
THERMAL_BITS = 0x020 | 0x040  # SW and HW thermal slowdown

# -- XID errors: what the common ones mean, and which ones end a GPU's work ---------------
XID_MEANINGS = {code: found.meaning for code, found in XIDS.items()}  # table: core.xid
CRITICAL_XIDS = frozenset({48, 64, 74, 79, 95})
XID_UNKNOWN = UNKNOWN_MEANING

# -- dcgm-exporter's labels ---------------------------------------------------------------
# Where a series names its host: released exporters, newer ones, Kubernetes pods.
DCGM_HOST_LABELS = ("Hostname", "hostname", "exported_pod", "pod")
# Host labels of a bare-metal exporter (the ones a per-GPU selector can narrow on).
DCGM_NODE_LABELS = ("Hostname", "hostname")
# Where it names the pod using the GPU: behind a ServiceMonitor, or kept with honor_labels.
DCGM_POD_LABELS = ("exported_pod", "pod")
DCGM_UUID_LABELS = ("UUID", "uuid")
DCGM_GPU_LABEL = "gpu"
DCGM_MODEL_LABELS = ("modelName", "model_name")
# The metric every dcgm-exporter exports for every GPU (temperature): whether a GPU answered.
GPU_PROBE_METRIC = "temperature"


def throttle_names(mask: float) -> str:
    """The reasons set in a throttle mask, e.g. "SW thermal, HW thermal"; "none"."""
    bits = int(mask)
    names = [name for bit, name in THROTTLE_BITS if bits & bit]
    return ", ".join(names) if names else "none"


def xid_meaning(code: int) -> str:
    return XID_MEANINGS.get(code, XID_UNKNOWN)
