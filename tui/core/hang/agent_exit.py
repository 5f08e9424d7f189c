"""What torchrun's agents say of their workers' ends: which rank's process exited, with what
exit code, and when (data-contracts §7).

An agent run with ``--tee`` writes its own lines to its console beside its workers' (theirs
prefixed ``[default<local rank>]:``). When a worker ends with an error, the agent logs::

    E1128 15:13:33.873000 15776 torch/distributed/elastic/multiprocessing/api.py:1002] failed
    (exitcode: -9) local_rank: 2 (pid: 15864) of binary: /usr/bin/python3

(on one line), then stops the node's other workers ("Sending process N closing signal
SIGTERM", which ends them without a "failed" line of their own). A negative exit code is
the signal that ended the process. The line is the evidence of an exit that a vanished
series is not: a frozen process vanishes from the metrics too, but its agent logs no
failure for it. Whether the exit was the rank's own fault or a consequence of another's
(a timeout waiting on a peer ends a process with exit code 1 too) is for its own log to
say (``ranktop.tui.core.hang.triage``).

The agent's rank order is torchrun's default: a node's workers are its ranks in order,
local rank 0 first. A console is named by its node (its host, or ``node<N>``).
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..model import RankMap

_FAILED = re.compile(r"\] failed \(exitcode: (-?\d{1,4})\) local_rank: (\d{1,6}) "
                     r"\(pid: (\d{1,10})\)")
_GLOG_TIME = re.compile(r"^[EWIF]\d{4} (\d\d):(\d\d):(\d\d)(\.\d{1,9})?")
_NODE_RANK = re.compile(r"node[-_]?(\d{1,9})")
FAILED_WORDS = "failed (exitcode"  # in every line that ``agent_exits`` reads


@dataclass(frozen=True)
class AgentExit:
    """A worker's end with an error, as its agent logged it."""

    rank: int
    exitcode: int
    pid: int
    clock: str  # the time of day the agent stamped ("15:13:33"), "" where none
    line: str
    seconds: float = 0.0  # into the day of its stamp: orders the exits of one incident

    @property
    def cause(self) -> str:
        """"its agent saw it exit -9 (SIGKILL) at 15:13:33"."""
        name = _signal_name(-self.exitcode) if self.exitcode < 0 else ""
        code = f"exit {self.exitcode}" + (f" ({name})" if name else "")
        return f"its agent saw it {code}{f' at {self.clock}' if self.clock else ''}"


def agent_exits(consoles: Mapping[str, Iterable[str]], rank_map: RankMap
                ) -> dict[int, AgentExit]:
    """Each rank's newest failure its agent logged, from each node's console lines (by the
    console's name: the node's host or ``node<N>``); a console naming no node of the job is
    passed over."""
    found: dict[int, AgentExit] = {}
    for name, lines in consoles.items():
        ranks = _node_ranks(name, rank_map)
        for line in lines:
            failed = _FAILED.search(line) if FAILED_WORDS in line else None
            if failed is None or int(failed.group(2)) >= len(ranks):
                continue
            rank = ranks[int(failed.group(2))]
            stamp = _GLOG_TIME.match(line)
            clock = ":".join(stamp.groups()[:3]) if stamp else ""
            found[rank] = AgentExit(rank, int(failed.group(1)), int(failed.group(3)), clock,
                                    line.rstrip("\r\n"), _seconds(stamp))
    return found


def _node_ranks(name: str, rank_map: RankMap) -> list[int]:
    """The ranks of the node a console is named by, in local rank order."""
    node = _NODE_RANK.fullmatch(name)
    short = name.split(".", 1)[0]
    ranks = [r for r in rank_map.ranks
             if (node is not None and r.node == int(node.group(1)))
             or r.host == name or r.host.split(".", 1)[0] == short]
    return [r.rank for r in sorted(ranks, key=lambda r: r.rank)]


def _seconds(stamp: re.Match[str] | None) -> float:
    if stamp is None:
        return 0.0
    hours, minutes, seconds, fraction = stamp.groups()
    return int(hours) * 3600 + int(minutes) * 60 + int(seconds) + float(fraction or 0)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return ""

