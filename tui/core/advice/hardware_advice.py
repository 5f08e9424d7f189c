"""The advice's rules for a fault of the GPU or its links: an XID by NVIDIA's resolution for
it (``core.xid``), an uncorrectable memory error and its row remap, NVLink CRC errors on one
GPU or over a node, and a GPU that slows the job without failing (hot, a flaky PCIe link).
The GPU's own recovery action (DCGM field 1523) turns any of them into a drain when it asks
for one."""

from __future__ import annotations

from ..anomaly import Anomaly
from ..detect.hardware import WINDOW_SECONDS
from ..domain import CRITICAL_XIDS
from ..model import is_missing
from ..xid import (
    CONTACT_SUPPORT,
    IGNORE,
    RECOVERY_DRAIN_AND_RESET,
    RECOVERY_DRAIN_P2P,
    RECOVERY_GPU_RESET,
    RECOVERY_NODE_REBOOT,
    RECOVERY_NONE,
    RESTART_APP,
    RESTART_NODE,
    recovery_name,
    xid,
    xid_text,
)
from .action import DRAIN, NOTHING, RESET, WATCH, Action, Seen, held_for

# Anomaly kinds whose root is the GPU or its links; every other kind is software.
HARDWARE_KINDS = frozenset({"xid", "ecc", "memory", "remap_failure", "nvlink_errors", "pcie",
                            "thermal", "nvlink"})
DRAINING_RECOVERY = frozenset({RECOVERY_NODE_REBOOT, RECOVERY_DRAIN_P2P,
                               RECOVERY_DRAIN_AND_RESET})
SPREAD_GPUS = 2  # NVLink errors on this many GPUs of a node: the node's fault, not a link's


def for_hardware(root: Anomaly, seen: Seen) -> Action:
    """The action for a root of one of the HARDWARE_KINDS, on its rank's GPU or node."""
    if root.kind == "xid":
        return _xid(root, seen)
    if root.kind in ("ecc", "memory", "remap_failure"):
        return _memory(root, seen)
    if root.kind == "nvlink_errors":
        return _nvlink(root, seen)
    return _watch_hardware(root, seen)


def _xid(root: Anomaly, seen: Seen) -> Action:
    rank = root.rank if root.rank is not None else -1
    code = seen.value("xid", rank)
    if (is_missing(code) or code <= 0) and root.figure.isdigit():
        code = float(root.figure)  # no longer reported (a restart): the code it was seen with
    if is_missing(code):
        return _watch_hardware(root, seen)
    known = xid(int(code))
    if known is not None and not known.hardware:
        return Action(NOTHING, f"NVIDIA's resolution for XID {known.code}: {known.resolution}",
                      f"{xid_text(known.code)} is the application's, not the GPU's",
                      rank=rank)
    if known is None or known.resolution == IGNORE:
        return _watch_hardware(root, seen)
    evidence = xid_text(known.code)
    resolution = f"NVIDIA's resolution for XID {known.code}: {known.resolution}"
    if known.resolution in (CONTACT_SUPPORT, RESTART_NODE):
        return _by_recovery(root, seen, DRAIN, evidence, resolution)
    if rank in seen.down:
        return _by_recovery(root, seen, DRAIN, evidence, "its rank died: the GPU is out of "
                            "the job until the node is drained and the GPU reset")
    if known.code in CRITICAL_XIDS:
        return _by_recovery(root, seen, DRAIN, evidence, f"{resolution}, and the GPU stops "
                            "work until then: drain the node first")
    if known.resolution == RESTART_APP:  # the application restarts; the GPU wants its reset
        resolution = (f"{resolution} (the job's restart); the GPU itself is cleared by a "
                      "reset once idle")
    return _by_recovery(root, seen, RESET, evidence, resolution)


def _nvlink(root: Anomaly, seen: Seen) -> Action:
    """CRC errors past the ledger's bar on one GPU: its link, which retrains at a reset; on
    ``SPREAD_GPUS`` or more GPUs of the node: what they share (NVSwitch, baseboard)."""
    node, _ = seen.place(root.rank if root.rank is not None else -1)
    gpus = _gpus_raised(root.kind, node, seen)
    window = f"in the last {WINDOW_SECONDS / 60:.0f} min"
    if gpus >= SPREAD_GPUS:
        return _by_recovery(root, seen, DRAIN, f"NVLink CRC errors {root.figure} on {gpus} "
                            f"GPUs of the node {window}",
                            f"NVLink CRC errors on {SPREAD_GPUS} or more GPUs of a node point "
                            "at what they share (NVSwitch, baseboard), not one link: drain "
                            "the node")
    return _by_recovery(root, seen, RESET, f"NVLink CRC errors {root.figure} {window}",
                        "NVLink CRC errors on one GPU of the node: a flaky link retrains at "
                        "a GPU reset")


def _gpus_raised(kind: str, node: str, seen: Seen) -> int:
    """How many GPUs of ``node`` have a ledger counter raising ``kind`` (past its bar, and
    still up in the window: the count does not shrink as the errors age out)."""
    return sum(1 for rank, entries in seen.ledger.items() if seen.place(rank)[0] == node
               and any(e.counter.kind == kind and e.raised for e in entries))


def _memory(root: Anomaly, seen: Seen) -> Action:
    rank = root.rank if root.rank is not None else -1
    if root.kind == "remap_failure" or seen.value("row_remap_failure", rank) > 0:
        return _by_recovery(root, seen, DRAIN, "row remap failed: no spare rows left",
                            "a GPU out of spare rows needs a reset, and likely an RMA")
    count = seen.value("ecc_dbe", rank)
    errors = (f"{count:.0f} uncorrectable ECC error(s)" if not is_missing(count) and count > 0
              else f"row(s) remapped {root.figure}".rstrip())
    if seen.recovery(rank) == RECOVERY_GPU_RESET:  # the reset the remap is waiting for
        return _by_recovery(root, seen, RESET, f"{errors}, row remap pending",
                            "a remapped row takes effect at the GPU's next reset", said=True)
    return _by_recovery(root, seen, RESET, errors,
                        "a remapped row takes effect at the GPU's next reset")


def _by_recovery(root: Anomaly, seen: Seen, kind: str, evidence: str, why: str,
                 said: bool = False) -> Action:
    """``kind`` unless the GPU's own recovery action asks for a drain; its action named in
    the evidence where exported and not none (unless the evidence already ``said`` it)."""
    rank = root.rank if root.rank is not None else -1
    action = seen.recovery(rank)
    if action is not None and action != RECOVERY_NONE and not said:
        evidence = f"{evidence}; recovery action: {recovery_name(action)}"
    if action in DRAINING_RECOVERY:
        kind, why = DRAIN, f"the GPU's recovery action is {recovery_name(action)}"
    node, gpu = seen.place(rank)
    return Action(kind, why, evidence, node=node, gpu=gpu, rank=rank)


def _watch_hardware(root: Anomaly, seen: Seen) -> Action:
    """A GPU that misbehaves but is not broken (hot, a flaky PCIe link, a slow NVLink)."""
    rank = root.rank if root.rank is not None else -1
    node, gpu = seen.place(rank)
    evidence = f"{root.label}, {held_for(root)}; on {node} GPU {gpu}"
    return Action(WATCH, "a GPU that slows the job but has not failed: watch it", evidence,
                  node=node, gpu=gpu, rank=rank)


def gpu_faulted(rank: int, seen: Seen) -> bool:
    """Whether ``rank``'s GPU reports a fault of its own: an XID of the GPU, or a recovery
    action."""
    code = seen.value("xid", rank)
    known = xid(int(code)) if not is_missing(code) and code > 0 else None
    return (known is not None and known.hardware) or bool(seen.recovery(rank))
