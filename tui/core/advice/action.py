"""What the advice says and what it reads: an ``Action`` (drain a node, reset a GPU when idle,
watch a rank, restart the job, nothing on hardware) and ``Seen`` (the frame, dead ranks' last
values, the hardware ledger, the hang, who else is on a node, the job's stop, the ranks down
it stepped on without)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..anomaly import Anomaly
from ..detect.down import DownRank
from ..detect.hardware import LedgerEntry
from ..hang.triage import HangVerdict
from ..model import Frame, RankMap, is_missing
from .restart_cost import JobStop, RestartCost
from .tenants import NodeTenants, job_names, others_text

DRAIN, RESET, WATCH, RESTART, NOTHING = "drain", "reset", "watch", "restart", "nothing"
KINDS = (DRAIN, RESET, WATCH, RESTART, NOTHING)  # most disruptive first
HARDWARE_ACTIONS = (DRAIN, RESET)
SHORT = {DRAIN: "drain the node", RESET: "reset the GPU when idle", WATCH: "watch",
         RESTART: "restart the job", NOTHING: "no hardware action"}
# Why a watch can be critical: a rank or GPU past the critical slowdown (a straggler 1.2x
# the median) sets the pace of a synchronous job, though no hardware has failed.
SLOWS_THE_JOB = "it slows the whole job"


@dataclass(frozen=True)
class Action:
    """One thing to do, where, why (``rule``) and on what evidence."""

    kind: str  # one of KINDS
    rule: str
    evidence: str
    node: str = ""
    gpu: int | None = None
    rank: int | None = None
    commands: tuple[str, ...] = ()  # to copy, never run (``core.advice.drain_commands``)
    others: NodeTenants | None = None  # a drain's: who else is on the node (None: not known)
    cost: RestartCost | None = None  # a restart's: from which step, what it loses
    critical: bool = False  # its incident is critical (a watch then says why it is)

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
    def other_jobs(self) -> tuple[str, ...]:
        """The names the others on a drain's node may go by in the jobs list."""
        if self.kind != DRAIN or self.others is None:
            return ()
        return tuple(name for tenant in self.others.others for name in job_names(tenant.user))

    @property
    def short(self) -> str:
        """A few words for an anomaly row, which names the rank and its place already; a
        critical row's watch says why it is critical though nothing has failed."""
        if self.kind == WATCH and self.critical:
            return f"{SHORT[WATCH]}: {SLOWS_THE_JOB}"
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
    left_behind: frozenset[int] = frozenset()  # ranks down the job stepped on without

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


def held_for(anomaly: Anomaly) -> str:
    """How long an anomaly has held: "3 min", "40 s"."""
    minutes = anomaly.held / 60
    return f"{minutes:.0f} min" if minutes >= 1 else f"{anomaly.held:.0f} s"
