"""What to do about each incident: drain a node, reset a GPU when idle, watch a rank, restart
the job, or nothing on hardware. Advice only: ranktop never runs any of it.

One action per node (or per rank, for a watch), derived from each confirmed incident's root
and what was exported of its GPU: the XID and NVIDIA's resolution for it (``core.xid``), the
GPU's own recovery action (DCGM field 1523), the hardware ledger's counters, whether the rank
died. Each action names the rule that chose it and the evidence, in words.

A fault in software (a desync, a data-loader stall, loss divergence, a straggler with no
hardware evidence) never gets a hardware action: only a watch, a restart, or "nothing to do
on hardware". The hardware kinds are listed here; any other kind is software.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ranktop.tui.core.anomaly import Anomaly
from ranktop.tui.core.checkpoint import from_metric
from ranktop.tui.core.domain import CRITICAL_XIDS
from ranktop.tui.core.down import DownRank
from ranktop.tui.core.drain_commands import (
    Scheduler,
    drain_commands,
    reset_commands,
    scheduler_of,
)
from ranktop.tui.core.hang import HangVerdict
from ranktop.tui.core.hardware import WINDOW_SECONDS, LedgerEntry
from ranktop.tui.core.incidents import Incident
from ranktop.tui.core.model import Frame, RankMap, is_missing
from ranktop.tui.core.restart_cost import JobStop, RestartCost, restart_cost
from ranktop.tui.core.tenants import NodeTenants, others_text
from ranktop.tui.core.xid import (
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

DRAIN, RESET, WATCH, RESTART, NOTHING = "drain", "reset", "watch", "restart", "nothing"
KINDS = (DRAIN, RESET, WATCH, RESTART, NOTHING)  # most disruptive first
HARDWARE_ACTIONS = (DRAIN, RESET)
SHORT = {DRAIN: "drain the node", RESET: "reset the GPU when idle", WATCH: "watch",
         RESTART: "restart the job", NOTHING: "no hardware action"}
# Anomaly kinds whose root is the GPU or its links; every other kind is software.
HARDWARE_KINDS = frozenset({"xid", "ecc", "memory", "remap_failure", "nvlink_errors", "pcie",
                            "thermal", "nvlink"})
DRAINING_RECOVERY = frozenset({RECOVERY_NODE_REBOOT, RECOVERY_DRAIN_P2P,
                               RECOVERY_DRAIN_AND_RESET})
SPREAD_GPUS = 2  # NVLink errors on this many GPUs of a node: the node's fault, not a link's
STOPPING_KINDS = ("hang", "missing")  # an incident holding one of these has stopped the job
FLIGHT_WORDS = {  # a Flight Recorder verdict's kind, as the advice says it
    "mismatch": "collective mismatch",
    "missing": "a rank never joined the collective",
    "state": "a rank's collective in another state",
}


@dataclass(frozen=True)
class Action:
    """One thing to do, where, why (``rule``) and on what evidence."""

    kind: str  # one of KINDS
    rule: str
    evidence: str
    node: str = ""
    gpu: int | None = None
    rank: int | None = None
    commands: tuple[str, ...] = ()  # to copy, never run (``core.drain_commands``)
    others: NodeTenants | None = None  # a drain's: who else is on the node (None: not known)
    cost: RestartCost | None = None  # a restart's: from which step, what it loses

    @property
    def hardware(self) -> bool:
        return self.kind in HARDWARE_ACTIONS

    @property
    def on_gpu(self) -> bool:
        """A drain, a reset or a watch: about one node or GPU, not the whole job."""
        return self.kind in (DRAIN, RESET, WATCH)

    @property
    def text(self) -> str:
        """"drain gpu-node-056 (XID 79: GPU has fallen off the bus; recovery action: reset)"."""
        if self.kind == DRAIN:
            return f"drain {self.node} ({self.evidence})"
        if self.kind == RESET:
            return f"reset GPU {self.gpu} on {self.node} when idle ({self.evidence})"
        if self.kind == WATCH:
            return f"watch rank {self.rank} ({self.evidence})"
        if self.kind == RESTART:
            cost = f": {self.cost.text}" if self.cost is not None else ""
            return f"restart the job ({self.evidence}){cost}"
        return f"nothing to do on hardware: {self.evidence}"

    @property
    def also(self) -> str:
        """A drain's line on who else is on its node, which it stops too ("": not a drain)."""
        return others_text(self.node, self.others) if self.kind == DRAIN else ""

    @property
    def short(self) -> str:
        """A few words for an anomaly row, which names the rank and its place already."""
        return SHORT[self.kind]


@dataclass(frozen=True)
class Seen:
    """What the advice reads beside the incidents: the frame, with a dead rank's last
    values standing in for its vanished series."""

    rank_map: RankMap
    frame: Frame | None
    down: Mapping[int, DownRank]
    ledger: Mapping[int, tuple[LedgerEntry, ...]]
    hang: HangVerdict | None
    neighbours: Mapping[str, NodeTenants] = field(default_factory=dict)  # by node
    stop: JobStop | None = None  # the job's step and since when it stands still

    def value(self, metric: str, rank: int) -> float:
        found = self.frame.value(metric, rank) if self.frame is not None else float("nan")
        if is_missing(found) and rank in self.down:
            return self.down[rank].last_values.get(metric, float("nan"))
        return found

    def recovery(self, rank: int) -> int | None:
        value = self.value("recovery_action", rank)
        return None if is_missing(value) else int(value)

    def place(self, rank: int) -> tuple[str, int | None]:
        if 0 <= rank < len(self.rank_map.ranks):
            found = self.rank_map.ranks[rank]
            return found.host, (found.gpu if found.gpu >= 0 else None)
        return "?", None


def advise(incidents: Iterable[Incident], seen: Seen) -> tuple[Action, ...]:
    """The actions for the confirmed incidents: one per node (the most disruptive, with
    the others' evidence), one per watched rank, then the restart and the no-hardware
    lines."""
    actions: list[Action] = []
    stopped: list[Incident] = []
    for incident in incidents:
        if incident.pending:
            continue
        actions += _for_root(incident.root, seen)
        if any(a.kind in STOPPING_KINDS for a in incident.members):
            stopped.append(incident)
    if stopped:
        actions.append(_restart(stopped, seen))
    scheduler = scheduler_of(seen.rank_map)
    return tuple(_with_commands(action, scheduler, seen.neighbours)
                 for action in _one_per_place(actions))


def _with_commands(action: Action, scheduler: Scheduler,
                   neighbours: Mapping[str, NodeTenants]) -> Action:
    if action.kind == DRAIN:
        return replace(action, commands=drain_commands(action.node, action.evidence, scheduler),
                       others=neighbours.get(action.node))
    if action.kind == RESET:
        return replace(action, commands=reset_commands(action.node, action.gpu))
    return action


def action_on(actions: Sequence[Action], rank: int, rank_map: RankMap) -> Action | None:
    """The action about ``rank``: its own, else the drain of its node (which took its
    GPU's reset along)."""
    host = rank_map.ranks[rank].host if 0 <= rank < len(rank_map.ranks) else None
    return (next((a for a in actions if a.rank == rank), None)
            or next((a for a in actions if a.kind == DRAIN and a.node == host), None))


def _for_root(root: Anomaly, seen: Seen) -> list[Action]:
    if root.rank is None or root.kind not in HARDWARE_KINDS:
        return _software(root, seen)
    if root.kind == "xid":
        return [_xid(root, seen)]
    if root.kind in ("ecc", "memory", "remap_failure"):
        return [_memory(root, seen)]
    if root.kind == "nvlink_errors":
        return [_nvlink(root, seen)]
    return [_watch_hardware(root, seen)]


def _xid(root: Anomaly, seen: Seen) -> Action:
    rank = root.rank if root.rank is not None else -1
    code = seen.value("xid", rank)
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
    evidence = f"{root.label}, {_held(root)}; on {node} GPU {gpu}"
    return Action(WATCH, "a GPU that slows the job but has not failed: watch it", evidence,
                  node=node, gpu=gpu, rank=rank)


def _software(root: Anomaly, seen: Seen) -> list[Action]:
    if root.kind in ("straggler", "fail_slow") and root.rank is not None:
        node, gpu = seen.place(root.rank)
        evidence = f"{root.label}, {_held(root)}; {_hardware_evidence(root.rank, seen)}"
        return [Action(WATCH, "a slow rank with no failed hardware: watch it", evidence,
                       node=node, gpu=gpu, rank=root.rank)]
    if root.kind == "hang":
        if root.rank is not None and _gpu_faulted(root.rank, seen):
            return []  # its GPU's own fault gets its own action
        return [Action(NOTHING, "the hang's culprit is alive, its GPU reports no fault",
                       f"the hang is in software ({_hang_words(seen.hang)})", rank=root.rank)]
    if root.kind in ("missing", "never_seen", "throughput"):
        return []  # a dead rank's restart is said once for the job; the rest are symptoms
    return [Action(NOTHING, "a fault of the job, not of a GPU",
                   f"{root.label}: {root.summary}", rank=root.rank)]


def _restart(stopped: Sequence[Incident], seen: Seen) -> Action:
    roots = ", ".join(f"{_stopper(i.root, seen)} on rank {i.root.rank}"
                      if i.root.rank is not None else i.root.name for i in stopped)
    return Action(RESTART, "the job has stopped: it resumes only from a restart",
                  f"stopped by {roots}", cost=_restart_cost(stopped, seen))


def _stopper(root: Anomaly, seen: Seen) -> str:
    """What stopped the job, in words: "XID 79" rather than the anomaly's kind."""
    code = seen.value("xid", root.rank) if root.kind == "xid" and root.rank is not None else 0
    return f"XID {int(code)}" if not is_missing(code) and code > 0 else root.name


def _restart_cost(stopped: Sequence[Incident], seen: Seen) -> RestartCost | None:
    """From the checkpoint metric, else the newest checkpoint line hang triage read; the
    job stopped when its step stood still, or when what stopped it began if earlier."""
    if seen.stop is None:
        return None
    checkpoint = from_metric(seen.frame.job if seen.frame is not None else None)
    if checkpoint is None and seen.hang is not None:
        checkpoint = seen.hang.checkpoint
    began = min((a.since for i in stopped for a in i.members if a.kind in STOPPING_KINDS),
                default=None)
    return restart_cost(seen.stop.stopped_by(began), checkpoint)


def _gpu_faulted(rank: int, seen: Seen) -> bool:
    code = seen.value("xid", rank)
    known = xid(int(code)) if not is_missing(code) and code > 0 else None
    return (known is not None and known.hardware) or bool(seen.recovery(rank))


def _hardware_evidence(rank: int, seen: Seen) -> str:
    risen = [e.text() for e in seen.ledger.get(rank, ()) if e.counter.flag or e.rise > 0]
    return risen[0] if risen else "no hardware evidence"


def _hang_words(hang: HangVerdict | None) -> str:
    flight = hang.flight if hang is not None else None
    if flight is not None and flight.kind in FLIGHT_WORDS:
        return f"Flight Recorder: {FLIGHT_WORDS[flight.kind]}"
    return "logs: the culprit rank is alive" if hang is not None else "no culprit named yet"


def _held(anomaly: Anomaly) -> str:
    minutes = anomaly.held / 60
    return f"{minutes:.0f} min" if minutes >= 1 else f"{anomaly.held:.0f} s"


def _one_per_place(actions: Sequence[Action]) -> tuple[Action, ...]:
    """One drain per node, taking the node's resets and their evidence along; one reset
    per GPU, one watch per rank; the restart and each nothing-line once."""
    kept: dict[tuple[object, ...], Action] = {}
    for action in sorted(actions, key=lambda a: KINDS.index(a.kind)):
        key = _place_key(action)
        if action.kind == RESET and ("node", action.node) in kept:
            key = ("node", action.node)
        earlier = kept.get(key)
        if earlier is None:
            kept[key] = action
        elif action.evidence not in earlier.evidence:
            kept[key] = replace(earlier, evidence=f"{earlier.evidence}; {action.evidence}")
    return tuple(kept.values())


def _place_key(action: Action) -> tuple[object, ...]:
    if action.kind == DRAIN:
        return "node", action.node
    if action.kind == RESET:
        return "gpu", action.node, action.gpu
    if action.kind == WATCH:
        return "rank", action.rank
    return action.kind, action.evidence
