"""Untrusted dumps parsed in a child process that the console can always kill.

Any process of the job can write into the dump folder, and some pickles of a few hundred
bytes take exponential work inside the unpickler itself (a tuple built from itself, doubled
forty times, hashed as a dict key), with the interpreter's lock held: no thread of the
console would run again, and not even SIGTERM would be handled. So each read of the dumps
parses them in a child process of its own (``python -m ranktop.tui.flight.parse_child``),
one file at a time:

- a file that takes longer than it was given (``ReadBudget.parse_seconds`` at most) gets
  the child killed, and the next file gets a new child (``timed_parse`` says why);
- the child may use at most ``memory_bytes`` (address space) and ``CPU_SECONDS`` of CPU in
  all, and it ends when its input closes;
- it ends with the console: on Linux the kernel kills it when the console's thread that
  started it ends (``PR_SET_PDEATHSIG``), however busy the unpickler keeps it; elsewhere a
  watch of its parent ends it once it is orphaned and the unpickler lets go of the lock;
- whatever goes wrong in the child (a RecursionError, a MemoryError, a crash) is one line
  for that rank, never an exception in the console.

The child answers with the compact ``RankDump`` (or the line) that ranktop's own code built
from plain data, pickled; the console loads it admitting ranktop's dump classes only.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import io
import json
import os
import pickle
import resource
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.hang.flight import Entry, Frontier, Group, RankDump
from ..core.text import plain

if TYPE_CHECKING:
    from .reader import ReadBudget

CPU_SECONDS = 600  # the most CPU one child may use, whatever it is asked
MIN_MEMORY_BYTES = 1 << 30
MEMORY_PER_FILE_BYTE = 24  # a pickle's objects take many times its bytes
HEADER = struct.Struct("!Q")  # the length of each answer, before it
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent ends
PARENT_WATCH_SECONDS = 1.0
_ANSWERS = {(RankDump.__module__, cls.__name__): cls for cls in (RankDump, Entry, Frontier,
                                                                   Group)}


def memory_bytes(budget: ReadBudget) -> int:
    """The address space a child may use to parse files of the budget's size."""
    return max(MIN_MEMORY_BYTES, MEMORY_PER_FILE_BYTE * budget.max_file_bytes)


class DumpParser:
    """Parses dumps one at a time in a child process, started when first needed."""

    def __init__(self, budget: ReadBudget) -> None:
        self.budget = budget
        self._child: subprocess.Popen | None = None

    def __enter__(self) -> DumpParser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def read(self, path: Path, rank: int, mtime: float,
             seconds: float | None = None) -> RankDump | str | None:
        """One rank's dump, or one line saying why it cannot be read; None when it took
        longer than ``seconds`` (``ReadBudget.parse_seconds`` unless given): the child is
        then killed, and the next file gets a new one."""
        name = plain(path.name)
        try:
            child = self._started()
            child.stdin.write(json.dumps([str(path), rank, mtime]).encode() + b"\n")
            child.stdin.flush()
            answer = self._answer(child, self.budget.parse_seconds if seconds is None
                                  else seconds)
        except (OSError, ValueError, EOFError, pickle.UnpicklingError):
            self.close()
            return f"{name}: not read, its parser ended (out of memory?)"
        if answer is None:
            self.close()
            return None
        return answer if isinstance(answer, RankDump | str) else f"{name}: not read"

    def close(self) -> None:
        """Stop the child, at once."""
        child, self._child = self._child, None
        if child is not None:
            with contextlib.suppress(OSError):
                child.kill()
            child.wait()
            for stream in (child.stdin, child.stdout):
                with contextlib.suppress(OSError):
                    stream.close()

    def _started(self) -> subprocess.Popen:
        if self._child is None:
            budget = json.dumps(dataclasses.asdict(self.budget))
            self._child = subprocess.Popen(
                [sys.executable, "-m", __name__, budget, str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True)
        return self._child

    def _answer(self, child: subprocess.Popen, seconds: float) -> object | None:
        """The child's answer, or None when it did not come within ``seconds``."""
        fd = child.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], seconds)
        if not ready:
            return None
        (size,) = HEADER.unpack(_read_exactly(fd, HEADER.size))
        return _DumpClasses(io.BytesIO(_read_exactly(fd, size))).load()


class _DumpClasses(pickle.Unpickler):
    """Loads what the child answers: ranktop's dump classes and plain data, nothing else."""

    def find_class(self, module: str, name: str) -> object:
        found = _ANSWERS.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} is no dump class")
        return found


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the parser ended")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def end_with_parent(parent: int) -> None:
    """End this process when ``parent`` (the console) ends: at once through the kernel
    where it can (Linux), and by a watch of the parent otherwise."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it ended before the kernel was told
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def serve(budget_json: str, parent: int | None = None) -> None:
    """The child: parse each file asked for, until the console closes its input or ends."""
    from .reader import ReadBudget, read_one

    if parent is not None:
        end_with_parent(parent)
    budget = ReadBudget(**json.loads(budget_json))
    for limit, value in ((resource.RLIMIT_AS, memory_bytes(budget)),
                         (resource.RLIMIT_CPU, CPU_SECONDS)):
        with contextlib.suppress(ValueError, OSError):  # a lower hard limit is already there
            resource.setrlimit(limit, (value, value))
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        path, rank, mtime = json.loads(line)
        try:
            found: RankDump | str = read_one(Path(path), rank, budget, mtime)
        except BaseException as error:  # anything at all is one line for that rank
            found = f"{plain(Path(path).name)}: not read ({error.__class__.__name__})"
        data = pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL)
        out.write(HEADER.pack(len(data)) + data)
        out.flush()


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)
