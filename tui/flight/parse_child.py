"""Untrusted dumps parsed in a child process that the console can always kill.

Any process of the job can write into the dump folder, and some pickles of a few hundred
bytes take exponential work inside the unpickler itself (a tuple built from itself, doubled
forty times, hashed as a dict key), with the interpreter's lock held: no thread of the
console would run again, and not even SIGTERM would be handled. So each read of the dumps
parses them in a child process of its own, one file at a time:

- a file that takes longer than ``ReadBudget.parse_seconds`` gets the child killed; that
  rank's dump is "not read" with the reason, and the next file gets a new child;
- the child may use at most ``memory_bytes`` (address space) and ``CPU_SECONDS`` of CPU in
  all (the kernel ends it past that, should the console itself be gone);
- whatever goes wrong in the child (a RecursionError, a MemoryError, a crash) is one line
  for that rank, never an exception in the console.

The child sends back only the compact ``RankDump`` (or the line), built by ranktop's own
code from plain data.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import resource
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING

from ranktop.tui.core.flight import RankDump
from ranktop.tui.logs.text import plain

if TYPE_CHECKING:
    from ranktop.tui.flight.reader import ReadBudget

CPU_SECONDS = 600  # the most CPU one child may use, whatever it is asked
MIN_MEMORY_BYTES = 1 << 30
MEMORY_PER_FILE_BYTE = 24  # a pickle's objects take many times its bytes


def memory_bytes(budget: ReadBudget) -> int:
    """The address space a child may use to parse files of the budget's size."""
    return max(MIN_MEMORY_BYTES, MEMORY_PER_FILE_BYTE * budget.max_file_bytes)


class DumpParser:
    """Parses dumps one at a time in a child process, started when first needed."""

    def __init__(self, budget: ReadBudget) -> None:
        self.budget = budget
        self._child: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None

    def __enter__(self) -> DumpParser:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def read(self, path: Path, rank: int, mtime: float) -> RankDump | str:
        """One rank's dump, or one line saying why it cannot be read."""
        name = plain(path.name)
        try:
            conn = self._started()
            conn.send((str(path), rank, mtime))
            if not conn.poll(self.budget.parse_seconds):
                self.close()
                return (f"{name}: not read, parsing took more than"
                        f" {self.budget.parse_seconds:g} s (a hostile or broken dump?)")
            found = conn.recv()
        except (EOFError, OSError):
            self.close()
            return f"{name}: not read, its parser ended (out of memory?)"
        return found if isinstance(found, RankDump | str) else f"{name}: not read"

    def close(self) -> None:
        """Stop the child, at once."""
        if self._conn is not None:
            self._conn.close()
        if self._child is not None:
            self._child.kill()
            self._child.join()
        self._child, self._conn = None, None

    def _started(self) -> Connection:
        if self._conn is None:
            context = multiprocessing.get_context("spawn")
            ours, theirs = context.Pipe()
            self._child = context.Process(target=serve, args=(theirs, self.budget),
                                          name="ranktop-dump-parser", daemon=True)
            self._child.start()
            theirs.close()
            self._conn = ours
        return self._conn


def serve(conn: Connection, budget: ReadBudget) -> None:
    """The child: parse each file asked for, until the console closes the pipe."""
    from ranktop.tui.flight.reader import read_one

    limits = ((resource.RLIMIT_AS, memory_bytes(budget)), (resource.RLIMIT_CPU, CPU_SECONDS))
    for limit, value in limits:
        with contextlib.suppress(ValueError, OSError):  # a lower hard limit is already there
            resource.setrlimit(limit, (value, value))
    while True:
        try:
            path, rank, mtime = conn.recv()
        except (EOFError, OSError):
            return
        try:
            found: RankDump | str = read_one(Path(path), rank, budget, mtime)
        except BaseException as error:  # anything at all is one line for that rank
            found = f"{plain(Path(path).name)}: not read ({error.__class__.__name__})"
        conn.send(found)
