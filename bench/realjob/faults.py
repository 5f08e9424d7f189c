"""The faults the rig injects into one rank of the real job, with how long to watch each.

A death is ``kill -9`` (torchrun's agents tear the group down and restart it from the last
checkpoint); a frozen rank is ``SIGSTOP`` (its peers wait in their collective until gloo's
timeout); a straggler and a loss spike are steered through ``train.py``'s control files.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class Job(Protocol):
    folder: Path


Action = Callable[[Job, int, int], None]  # (rig, pid, rank)


def _nothing(rig: Job, pid: int, rank: int) -> None:
    return None


def _kill(rig: Job, pid: int, rank: int) -> None:
    os.kill(pid, signal.SIGKILL)


def _freeze(rig: Job, pid: int, rank: int) -> None:
    os.kill(pid, signal.SIGSTOP)


def _control(name: str, value: str | None) -> Action:
    def act(rig: Job, pid: int, rank: int) -> None:
        path = rig.folder / "control" / name.format(rank=rank)
        if value is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(value)

    return act


@dataclass(frozen=True)
class Fault:
    name: str
    start: Action
    end: Action
    watch: float  # seconds from the fault to its end
    after: float  # seconds watched after its end
    gloo_timeout: float = 60.0  # the job's collective timeout


FAULTS = {fault.name: fault for fault in (
    # torchrun restarts the group 20-30 s after a death; watch the new attempt step a while
    Fault("death", _kill, _nothing, watch=75, after=0),
    # the peers time out after 60 s, exit, and the agents restart the group
    Fault("frozen", _freeze, _nothing, watch=130, after=0),
    Fault("straggler", _control("slow-{rank}", "0.6"), _control("slow-{rank}", None),
          watch=60, after=20),
    Fault("spike", _control("spike", "1.1"), _control("spike", None), watch=60, after=40),
)}
