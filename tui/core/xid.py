"""XID errors and the GPU's own recovery action: what each means and what NVIDIA says to do.

Sources:
- the XID catalogue, "Analyzing Xid Errors with the Xid Catalog" in NVIDIA's GPU deployment
  and management documentation,
  https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (its "Resolution
  Bucket (Immediate Action)" column: RESTART_APP, RESET_GPU, RESTART_BM, CONTACT_SUPPORT,
  IGNORE), and for the memory XIDs the page-retirement and row-remapping guides beside it,
  https://docs.nvidia.com/deploy/dynamic-page-retirement/ and
  https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/;
- the recovery action: NVML's ``nvmlDeviceGetRepairStatus`` / ``nvmlGpuRecoveryAction_t``
  (``NVML_GPU_RECOVERY_ACTION_NONE`` 0, ``_GPU_RESET`` 1, ``_NODE_REBOOT`` 2,
  ``_DRAIN_P2P`` 3, ``_DRAIN_AND_RESET`` 4), exported by DCGM as field 1523,
  ``DCGM_FI_DEV_GPU_RECOVERY_ACTION``, and announced by XID 154.

The table holds the XIDs a training fleet meets; a code not in it says so and points at the
catalogue rather than guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

CATALOGUE_URL = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"

# What the catalogue's immediate-action buckets ask of the on-call engineer.
RESTART_APP = "restart the application"
RESET_GPU = "reset the GPU"
RESTART_NODE = "reboot the node"
CONTACT_SUPPORT = "contact NVIDIA support (RMA)"
IGNORE = "nothing: informational"
BUCKETS = (RESTART_APP, RESET_GPU, RESTART_NODE, CONTACT_SUPPORT, IGNORE)

# NVML's recovery actions, by the value DCGM exports.
RECOVERY_NONE = 0
RECOVERY_GPU_RESET = 1
RECOVERY_NODE_REBOOT = 2
RECOVERY_DRAIN_P2P = 3
RECOVERY_DRAIN_AND_RESET = 4
RECOVERY_ACTIONS = {
    RECOVERY_NONE: "none",
    RECOVERY_GPU_RESET: "reset",
    RECOVERY_NODE_REBOOT: "node reboot",
    RECOVERY_DRAIN_P2P: "drain peer-to-peer",
    RECOVERY_DRAIN_AND_RESET: "drain and reset",
}


@dataclass(frozen=True)
class Xid:
    """One XID: its meaning, NVIDIA's immediate action, and whether it is the GPU's fault."""

    code: int
    meaning: str
    resolution: str  # one of BUCKETS
    hardware: bool  # False: the application (or the driver's view of it) caused it
    recovery: int = RECOVERY_NONE  # the recovery action the GPU reports with it


XIDS = {x.code: x for x in (
    Xid(13, "graphics engine exception", RESTART_APP, hardware=False),
    Xid(31, "GPU memory page fault", RESTART_APP, hardware=False),
    Xid(43, "GPU stopped processing", RESTART_APP, hardware=False),
    Xid(45, "preemptive cleanup after an earlier error", IGNORE, hardware=False),
    Xid(48, "double-bit ECC error", RESET_GPU, hardware=True, recovery=RECOVERY_GPU_RESET),
    Xid(61, "internal micro-controller breakpoint", RESET_GPU, hardware=True,
        recovery=RECOVERY_GPU_RESET),
    Xid(62, "internal micro-controller halt", RESET_GPU, hardware=True,
        recovery=RECOVERY_GPU_RESET),
    Xid(63, "ECC page retirement or row remapping", RESET_GPU, hardware=True,
        recovery=RECOVERY_GPU_RESET),
    Xid(64, "ECC page retirement or row remapping failed", CONTACT_SUPPORT, hardware=True,
        recovery=RECOVERY_DRAIN_AND_RESET),
    Xid(74, "NVLink error", RESET_GPU, hardware=True, recovery=RECOVERY_DRAIN_P2P),
    Xid(79, "GPU has fallen off the bus", RESET_GPU, hardware=True,
        recovery=RECOVERY_GPU_RESET),
    Xid(92, "high single-bit ECC error rate", IGNORE, hardware=True),
    Xid(94, "contained ECC error", RESTART_APP, hardware=True, recovery=RECOVERY_GPU_RESET),
    Xid(95, "uncontained ECC error", RESET_GPU, hardware=True,
        recovery=RECOVERY_DRAIN_AND_RESET),
    Xid(119, "GSP RPC timeout", RESET_GPU, hardware=True, recovery=RECOVERY_GPU_RESET),
    Xid(120, "GSP error", RESET_GPU, hardware=True, recovery=RECOVERY_GPU_RESET),
)}
UNKNOWN_MEANING = "see NVIDIA's XID catalogue"


def xid(code: int) -> Xid | None:
    """The table's entry for ``code``; None for a code it does not hold."""
    return XIDS.get(code)


def xid_text(code: int) -> str:
    """"XID 79: GPU has fallen off the bus" (a code not in the table points at the
    catalogue)."""
    found = XIDS.get(code)
    return f"XID {code}: {found.meaning if found else UNKNOWN_MEANING}"


def recovery_name(value: float) -> str:
    """What a recovery-action value says: "reset", "drain and reset"; an unknown value is
    named by its number."""
    code = int(value)
    return RECOVERY_ACTIONS.get(code, f"unknown recovery action {code}")
