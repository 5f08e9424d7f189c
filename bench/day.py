"""A simulated day of faults, with the ground truth of what should be done about each.

``day_scenario(seed, ranks)`` draws a day (``loop_seconds`` 86400) of faults one after
another, every effect the simulator knows: a throttling GPU, a straggler, a bad NVLink, an
uncorrectable ECC error (its row remapped, or the remap failing), XIDs of several codes (the
GPU's and the application's), a GPU falling off the bus and its rank dying, a rank dying
alone, a collective hang (a rank that never joins, or joins with other sizes), a data-loader
stall, a loss divergence. Each lasts 1.5 to 5 minutes and the next begins 11 to 15 minutes
after it ends: longer than the hardware ledger's 10-minute window, so each fault is judged
alone.

The truth for each (``Truth``): for a fault of the GPU, the node (and GPU) to act on and how
(drain the node, or reset the GPU when idle); for every other fault, no hardware action (a
watch, a restart or nothing, but never a drain or a reset). ``truth_of`` gives the same for
any scenario's fault: the benches judge the demo's loop with it too.

Imported by ``bench/advice_day.py`` (the advice over the day) and by other benches that
want a day of faults with its truth.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.core.advice.advise import DRAIN, RESET
from ranktop.tui.core.xid import xid
from ranktop.tui.simulator.cluster import host_names
from ranktop.tui.simulator.scenario import Fault, Scenario

BASE_STEP_SECONDS = 1.12
TOKENS_PER_STEP = 4194304
DURATION = (90.0, 300.0)
GAP = (660.0, 900.0)  # past the ledger's 10-minute window, so each fault is judged alone
DEATH_AFTER_XID = 2.0  # seconds from a GPU falling off the bus to its rank's death

# What the on-call engineer should do about each XID of the GPU, by NVIDIA's catalogue and
# the recovery action the GPU reports with it: drain where the GPU stops work or asks for a
# drain or support, reset when idle where a reset is enough. The application's XIDs (13,
# 31, 43) ask for nothing on hardware.
XID_ACTIONS = {48: DRAIN, 63: RESET, 64: DRAIN, 74: DRAIN, 79: DRAIN, 94: RESET, 95: DRAIN,
               119: RESET}
APPLICATION_XIDS = (13, 31, 43)

# A case is a fault to draw: its effect and parameters ("xid_death": XID 79, then the rank
# dies, as two faults).
CASES: tuple[tuple[str, dict], ...] = (
    ("thermal_throttle", {}),
    ("straggler", {"factor": 1.45}),
    ("nvlink_drop", {"factor": 0.3}),
    ("ecc_dbe", {"remap_failure": False}),
    ("ecc_dbe", {"remap_failure": True}),
    *(("xid", {"code": code}) for code in sorted(XID_ACTIONS) if code != 79),
    *(("xid", {"code": code}) for code in APPLICATION_XIDS),
    ("xid_death", {}),
    ("rank_death", {"dumps": "none", "others_step": 0.0}),
    ("collective_hang", {"cause": "missing", "dumps": "none"}),
    ("collective_hang", {"cause": "mismatch", "dumps": "none"}),
    ("job_stall", {}),
    ("loss_divergence", {}),
)
JOB_WIDE = ("job_stall", "loss_divergence")


@dataclass(frozen=True)
class Truth:
    """What should be done about one fault: ``action`` (drain or reset) on ``node``'s GPU
    ``gpu``; ``action`` None: nothing on hardware (``node`` still says where it struck)."""

    fault: Fault
    node: str | None
    gpu: int | None
    action: str | None
    name: str  # "xid 94", "ecc_dbe (remap failure)"

    @property
    def hardware(self) -> bool:
        return self.action is not None


def truth_of(fault: Fault, hosts: list[str], gpus_per_node: int, name: str = "") -> Truth:
    """The truth for one fault of a job laid out host by host (as the simulator does)."""
    node = gpu = None
    if fault.rank is not None:
        node, gpu = hosts[fault.rank // gpus_per_node], fault.rank % gpus_per_node
    return Truth(fault, node, gpu, _action(fault), name or _name(fault))


def _action(fault: Fault) -> str | None:
    if fault.effect == "xid":
        known = xid(fault.params["code"])
        return XID_ACTIONS.get(fault.params["code"]) if known and known.hardware else None
    if fault.effect == "ecc_dbe":
        return DRAIN if fault.params.get("remap_failure") else RESET
    if fault.effect == "nvlink_drop":
        return DRAIN  # the simulated drop raises CRC errors on several GPUs of the node
    return None


def _name(fault: Fault) -> str:
    if fault.effect == "xid":
        return f"xid {fault.params['code']}"
    if fault.effect == "ecc_dbe" and fault.params.get("remap_failure"):
        return "ecc_dbe (remap failure)"
    if fault.effect == "collective_hang":
        return f"collective_hang ({fault.params['cause']})"
    return fault.effect


def day_scenario(seed: int, ranks: int, hours: float = 24.0,
                 gpus_per_node: int = 8) -> tuple[Scenario, tuple[Truth, ...]]:
    """A seeded day (or ``hours``) of faults on ``ranks`` ranks, and the truth for each.

    A GPU out of spare rows keeps its failure flag for good: its node is drained, so it
    happens once a day at most and no later fault falls on that node."""
    if ranks < 2 * gpus_per_node or ranks % gpus_per_node:
        raise ValueError(f"ranks must be two or more {gpus_per_node}-GPU nodes")
    rng = random.Random(seed)
    hosts = host_names(ranks // gpus_per_node)
    end = hours * 3600
    truths: list[Truth] = []
    t, deck, drained = rng.uniform(*GAP) / 3, [], set()
    while True:
        duration = round(rng.uniform(*DURATION))
        if t + duration > end:
            break
        if not deck:
            deck = rng.sample(CASES, len(CASES))
        effect, params = deck.pop()
        if params.get("remap_failure") and drained:
            continue
        rank = rng.choice([r for r in range(ranks) if r // gpus_per_node not in drained])
        for fault, name in _faults(effect, dict(params), rank, round(t), duration):
            truths.append(truth_of(fault, hosts, gpus_per_node, name))
        if params.get("remap_failure"):
            drained.add(rank // gpus_per_node)
        t += duration + rng.uniform(*GAP)
    faults = tuple(truth.fault for truth in truths)
    scenario = Scenario(f"simulated-day-{seed}", end, BASE_STEP_SECONDS, TOKENS_PER_STEP,
                        faults)
    return scenario, tuple(truths)


def _faults(effect: str, params: dict, rank: int, start: float, duration: float
            ) -> list[tuple[Fault, str]]:
    """The case's faults, each with its name ("" for the default)."""
    if effect == "xid_death":
        death = Fault("rank_death", rank, start + DEATH_AFTER_XID, duration - DEATH_AFTER_XID,
                      {"dumps": "none", "others_step": 0.0})
        return [(Fault("xid", rank, start, duration, {"code": 79}), ""),
                (death, "rank_death (after xid 79)")]
    return [(Fault(effect, None if effect in JOB_WIDE else rank, start, duration, params), "")]
