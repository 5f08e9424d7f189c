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

from ..core.text import plain
from .dump_paths import RANK, find_dumps

BYTE = b"1"
SHOWN = 3  # pipes named in the confirmation, first and last


def pipes_pattern(pattern: str) -> str:
    """The pipes' pattern: as given with ``{rank}``, else PyTorch's ``<prefix><rank>.pipe``."""
    return pattern if RANK in pattern else f"{pattern}{RANK}.pipe"


def find_pipes(pattern: str, world_size: int) -> dict[int, Path]:
    """Each rank's pipe that exists (FIFO or not: ``request_dumps`` checks); PatternError
    for a bad pattern."""
    return find_dumps(pipes_pattern(pattern), world_size)


def named_pipes(pipes: dict[int, Path]) -> tuple[dict[int, Path], dict[int, Path]]:
    """The paths that are FIFOs (the ones that would be written), and the rest."""
    fifos, others = {}, {}
    for rank, path in pipes.items():
        try:
            is_fifo = stat.S_ISFIFO(os.stat(path).st_mode)
        except OSError:
            is_fifo = False
        (fifos if is_fifo else others)[rank] = path
    return fifos, others


def describe(pipes: dict[int, Path], world_size: int) -> str:
    """What asking for dumps will write where, for the confirmation: the FIFOs counted and
    named as they are, every path made safe to show (a folder's name is outside data)."""
    fifos, others = named_pipes(pipes)
    if not fifos:
        text = "No rank's named pipe (FIFO) was found: nothing would be written."
        return text + ("\n" + _not_fifos(others) if others else "")
    noun = "named pipe (FIFO)" if len(fifos) == 1 else "named pipes (FIFOs)"
    lines = [f"ranktop will write one byte ({BYTE.decode()!r}) into each of {len(fifos)} {noun},"
             " and nothing else anywhere:", *(f"  {p}" for p in _shown(fifos)),
             "Each rank listening on its pipe then writes its Flight Recorder dump to its"
             " own dump file (TORCH_FR_DUMP_TEMP_FILE) and goes on running; ranktop reads"
             " the dumps as they land."]
    if others:
        lines.append(_not_fifos(others))
    missing = world_size - len(pipes)
    if missing:
        lines.append(f"{missing} of {world_size} ranks have no pipe: they will not be asked.")
    return "\n".join(lines)


def _not_fifos(others: dict[int, Path]) -> str:
    shown = ", ".join(_shown(others, 1))
    return (f"{len(others)} of the paths found are not named pipes and will not be written"
            f" to: {shown}")


def _shown(paths: dict[int, Path], first: int = SHOWN) -> list[str]:
    """The first few paths and the last, each on one safe line."""
    ranks = sorted(paths)
    shown = [plain(str(paths[r])) for r in ranks[:first]]
    if len(ranks) > first:
        shown.append(f"... ({len(ranks) - first - 1} more) ..." if len(ranks) > first + 1
                     else "")
        shown.append(plain(str(paths[ranks[-1]])))
    return [line for line in shown if line]


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
