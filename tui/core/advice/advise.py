"""What to do about each incident: drain a node, reset a GPU when idle, watch a rank, restart
the job, or nothing on hardware. Advice only: ranktop never runs any of it.

One action per node (or per rank, for a watch), derived from each confirmed incident's root
and what was exported of its GPU: the XID and NVIDIA's resolution for it (``core.xid``), the
GPU's own recovery action (DCGM field 1523), the hardware ledger's counters, whether the rank
died. Each action names the rule that chose it and the evidence, in words.

A fault in software (a desync, a data-loader stall, loss divergence, a straggler with no
hardware evidence) never gets a hardware action: only a watch, a restart, or "nothing to do
on hardware". The kinds of the GPU and their rules are in ``core.advice.hardware_advice``; any
other kind is software. ``Action`` and ``Seen`` are in ``core.advice.action``.

Progress is the arbiter of a restart: a rank down that the job's step went on without
(``Seen.left_behind``) stopped nothing, so it asks for no restart; it gets a line saying the
job goes on without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ..anomaly import Anomaly
from ..hang.checkpoint import from_metric
from ..hang.triage import HangVerdict
from ..model import RankMap, is_missing
from ..moment import ago
from .action import (
    DRAIN,
    HARDWARE_ACTIONS,
    KINDS,
    NOTHING,
    RESET,
    RESTART,
    SHORT,
    WATCH,
    Action,
    Seen,
    held_for,
)
from .drain_commands import (
    Scheduler,
    drain_commands,
    reset_commands,
    scheduler_of,
)
from .hardware_advice import HARDWARE_KINDS, for_hardware, gpu_faulted
from .incidents import Incident, left_behind
from .restart_cost import RestartCost, restart_cost
from .tenants import NodeTenants

__all__ = ["DRAIN", "HARDWARE_ACTIONS", "KINDS", "NOTHING", "RESET", "RESTART", "SHORT",
           "WATCH", "Action", "Seen", "action_on", "advise"]

STOPPING_KINDS = ("hang", "missing")  # an incident holding one of these has stopped the job
# (a missing rank not left behind)
FLIGHT_WORDS = {  # a Flight Recorder verdict's kind, as the advice says it
    "mismatch": "collective mismatch",
    "missing": "a rank never joined the collective",
    "state": "a rank's collective in another state",
}


def advise(incidents: Iterable[Incident], seen: Seen) -> tuple[Action, ...]:
    """The actions for the confirmed incidents: one per node (the most disruptive, with
    the others' evidence), one per watched rank, then the restart and the no-hardware
    lines."""
    actions: list[Action] = []
    stopped: list[Incident] = []
    for incident in incidents:
        if incident.pending:
            continue
        critical = incident.severity == "critical"
        actions += [replace(a, critical=critical) for a in _for_root(incident.root, seen)]
        if any(_stops(a, seen) for a in incident.members):
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
    return [for_hardware(root, seen)]


def _software(root: Anomaly, seen: Seen) -> list[Action]:
    if root.kind in ("straggler", "fail_slow") and root.rank is not None:
        node, gpu = seen.place(root.rank)
        evidence = f"{root.label}, {held_for(root)}; {_hardware_evidence(root.rank, seen)}"
        return [Action(WATCH, "a slow rank with no failed hardware: watch it", evidence,
                       node=node, gpu=gpu, rank=root.rank)]
    if root.kind == "hang":
        if root.rank is not None and gpu_faulted(root.rank, seen):
            return []  # its GPU's own fault gets its own action
        return [Action(NOTHING, "the hang's culprit is alive, its GPU reports no fault",
                       f"the hang is in software ({_hang_words(seen.hang)})", rank=root.rank)]
    if left_behind(root, seen.left_behind):
        return [_goes_on_without(root, seen)]
    if root.kind in ("missing", "never_seen", "throughput"):
        return []  # a dead rank's restart is said once for the job; the rest are symptoms
    return [Action(NOTHING, "a fault of the job, not of a GPU",
                   f"{root.label}: {root.summary}", rank=root.rank)]


def _goes_on_without(root: Anomaly, seen: Seen) -> Action:
    """A rank down in a job that steps on without it: no restart, nothing on hardware."""
    gone = seen.down.get(root.rank) if root.rank is not None else None
    how = gone.summary if gone is not None else root.summary
    since = gone.since if gone is not None else root.since
    now = seen.frame.time if seen.frame is not None else since
    step = seen.stop.step if seen.stop is not None else float("nan")
    to = "" if is_missing(step) else f" (to step {int(step):,})"
    return Action(NOTHING, "the job steps on without a rank it lost: no restart",
                  f"rank {root.rank} down {ago(now - since)} ({how}); the job goes on "
                  f"without it{to}", rank=root.rank)


def _stops(anomaly: Anomaly, seen: Seen) -> bool:
    return anomaly.kind in STOPPING_KINDS and not left_behind(anomaly, seen.left_behind)


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
    began = min((a.since for i in stopped for a in i.members if _stops(a, seen)),
                default=None)
    return restart_cost(seen.stop.stopped_by(began), checkpoint)


def _hardware_evidence(rank: int, seen: Seen) -> str:
    risen = [e.text() for e in seen.ledger.get(rank, ()) if e.counter.flag or e.rise > 0]
    return risen[0] if risen else "no hardware evidence"


def _hang_words(hang: HangVerdict | None) -> str:
    flight = hang.flight if hang is not None else None
    if flight is not None and flight.kind in FLIGHT_WORDS:
        return f"Flight Recorder: {FLIGHT_WORDS[flight.kind]}"
    return "logs: the culprit rank is alive" if hang is not None else "no culprit named yet"


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
