"""The command behind an action, to copy and run by hand: ranktop never runs it.

Which scheduler's command depends on what ranktop knows of the cluster: ranks that run in
pods are on Kubernetes (``kubectl cordon`` / ``kubectl drain``); a rank map learned from the
Slurm node list is Slurm's (``scontrol update … State=DRAIN``); otherwise both are given as
hints. Node names come from outside (exporter labels, rank-map files): a name that is not a
plain host name gets no command at all, rather than one that could run something else. The
reason is shell-quoted, cut short, and holds printable characters only.
"""

from __future__ import annotations

import re
import shlex
from enum import Enum

from ..model import RankMap
from ..ranks import FROM_SLURM

# RFC 1123 host names (dot-separated labels of letters, digits and inner hyphens): what
# Slurm node names and Kubernetes node names both are.
_HOST_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
HOST_NAME = re.compile(rf"{_HOST_LABEL}(?:\.{_HOST_LABEL})*")
MAX_HOST_CHARS = 253
MAX_REASON_CHARS = 120  # a drain reason is read in `sinfo -R`: the gist, not the whole story
REASON_PREFIX = "ranktop: "
NO_COMMAND = "no command: the node's name is not a plain host name"


class Scheduler(Enum):
    SLURM = "slurm"
    KUBERNETES = "kubernetes"
    UNKNOWN = "unknown"  # both given, as hints


def scheduler_of(rank_map: RankMap) -> Scheduler:
    """Kubernetes when the ranks run in pods, Slurm when their map came from its node list."""
    if any(rank.pod for rank in rank_map.ranks):
        return Scheduler.KUBERNETES
    if rank_map.source == FROM_SLURM:
        return Scheduler.SLURM
    return Scheduler.UNKNOWN


def safe_host(name: str) -> bool:
    """Whether ``name`` may stand in a command line as it is."""
    return len(name) <= MAX_HOST_CHARS and HOST_NAME.fullmatch(name) is not None


def reason_text(evidence: str) -> str:
    """The drain reason: printable characters only, one line, cut to MAX_REASON_CHARS."""
    printable = "".join(c if c.isprintable() else " " for c in evidence)
    reason = REASON_PREFIX + " ".join(printable.split())
    return reason if len(reason) <= MAX_REASON_CHARS else reason[:MAX_REASON_CHARS - 1] + "…"


def drain_commands(node: str, evidence: str, scheduler: Scheduler) -> tuple[str, ...]:
    """The commands that take ``node`` out of service; none for an unsafe name."""
    if not safe_host(node):
        return ()
    slurm = (f"scontrol update NodeName={node} State=DRAIN "
             f"Reason={shlex.quote(reason_text(evidence))}")
    kubernetes = (f"kubectl cordon {node}",
                  f"kubectl drain {node} --ignore-daemonsets --delete-emptydir-data")
    if scheduler is Scheduler.SLURM:
        return (slurm,)
    if scheduler is Scheduler.KUBERNETES:
        return kubernetes
    return (slurm, *kubernetes)


def reset_commands(node: str, gpu: int | None) -> tuple[str, ...]:
    """The reset of one GPU, run on its node once nothing uses it; none for an unsafe name
    or an unknown GPU."""
    if not safe_host(node) or gpu is None or gpu < 0:
        return ()
    return (f"ssh {node} sudo nvidia-smi --gpu-reset -i {gpu}",)
