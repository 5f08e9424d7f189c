"""Asking every rank for a Flight Recorder dump now, through its debug pipe.

With ``TORCH_NCCL_DEBUG_INFO_PIPE_FILE=<prefix>`` each rank of a PyTorch job creates a named
pipe (FIFO) ``<prefix><rank>.pipe`` and listens on it; a byte written to it makes that rank
dump its Flight Recorder buffer (to its usual dump file) without stopping the job. That is
the only thing ranktop ever writes into a job's files, and only when the user has named the
pipes (``[logs] dump_pipes``), enabled it (``[logs] request_dumps = true``), pressed the key
and confirmed a message that says exactly what is written where (``describe``).

Only FIFOs are written to: a path that is anything else (a regular file, a link to one) is
left alone and reported. A FIFO is opened without blocking, so a rank that does not listen
(dead, or started without the variable) is reported ("no reader") rather than waited on.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ranktop.tui.flight.dump_paths import RANK, find_dumps

BYTE = b"1"
SHOWN = 3  # pipes named in the confirmation, first and last


def pipes_pattern(pattern: str) -> str:
    """The pipes' pattern: as given with ``{rank}``, else PyTorch's ``<prefix><rank>.pipe``."""
    return pattern if RANK in pattern else f"{pattern}{RANK}.pipe"


def find_pipes(pattern: str, world_size: int) -> dict[int, Path]:
    """Each rank's pipe that exists (FIFO or not: ``request_dumps`` checks); PatternError
    for a bad pattern."""
    return find_dumps(pipes_pattern(pattern), world_size)


def describe(pipes: dict[int, Path], world_size: int) -> str:
    """What asking for dumps will write where, for the confirmation."""
    if not pipes:
        return "No rank's pipe was found: nothing would be written."
    ranks = sorted(pipes)
    shown = [str(pipes[r]) for r in ranks[:SHOWN]]
    if len(ranks) > SHOWN:
        shown.append(f"... ({len(ranks) - SHOWN - 1} more) ...")
        shown.append(str(pipes[ranks[-1]]))
    missing = world_size - len(pipes)
    lines = [f"ranktop will write one byte ({BYTE.decode()!r}) into each of {len(pipes)} named"
             " pipes (FIFOs), and nothing else anywhere:", *(f"  {p}" for p in shown),
             "Each rank listening on its pipe then writes its Flight Recorder dump to its"
             " own dump file (TORCH_FR_DUMP_TEMP_FILE) and goes on running; ranktop reads"
             " the dumps as they land. A path that is not a FIFO is not written to."]
    if missing:
        lines.append(f"{missing} of {world_size} ranks have no pipe: they will not be asked.")
    return "\n".join(lines)


@dataclass
class Asked:
    """What asking gave: the ranks whose pipe took the byte, and why the others did not."""

    asked: list[int] = field(default_factory=list)
    failed: dict[int, str] = field(default_factory=dict)

    def summary(self) -> str:
        text = f"asked {len(self.asked)} ranks for a Flight Recorder dump"
        if self.failed:
            rank, why = next(iter(sorted(self.failed.items())))
            more = f" and {len(self.failed) - 1} more" if len(self.failed) > 1 else ""
            text += f"; not asked: rank {rank} ({why}){more}"
        return text


def request_dumps(pipes: dict[int, Path]) -> Asked:
    """Write one byte into each rank's FIFO (blocking: call it off the UI's thread)."""
    result = Asked()
    for rank, path in sorted(pipes.items()):
        why = _write_one(path)
        if why:
            result.failed[rank] = why
        else:
            result.asked.append(rank)
    return result


def _write_one(path: Path) -> str:
    """"" when the byte went in, else why not."""
    try:
        if not stat.S_ISFIFO(os.stat(path).st_mode):  # a device is not even opened
            return "not a named pipe: nothing written"
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        if error.errno == errno.ENXIO:
            return "no reader: the rank is not listening"
        return error.strerror or str(error)
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):  # checked on what was opened
            return "not a named pipe: nothing written"
        os.write(fd, BYTE)
        return ""
    except OSError as error:
        return error.strerror or str(error)
    finally:
        os.close(fd)
