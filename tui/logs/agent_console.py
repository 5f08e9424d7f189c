"""The consoles of torchrun's agents, where the ``torchrun:DIR`` preset finds them: beside
the node folders, one a node, named by the node's folder and ``.console``::

    DIR/node-a/<rdzv_id>_<random>/attempt_0/2/stderr.log    (node-a's --log-dir)
    DIR/node-a.console                                      (node-a's agent, --tee output)

(DIR is the folder of node folders, or the node folder given: the consoles are then in its
parent.) Of a console only the agent's "failed (exitcode: …)" lines are kept
(``ranktop.tui.core.hang.agent_exit`` reads them), from its last ``TAIL_BYTES``: the evidence of
which rank's process exited, that a rank's own log, cut short by a ``kill -9``, cannot give.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..core.hang.agent_exit import FAILED_WORDS
from ..core.outside_file import open_regular
from ..core.text import plain
from .discovery import preset_argument
from .line_time import line_time, local_clock

SUFFIX = ".console"
TAIL_BYTES = 256 * 1024  # of each console: its newest restarts and failures
MAX_CONSOLES = 4096  # one a node
LINE_CHARS = 1000  # of a line kept, made plain: it is shown as evidence
EARLIER_SECONDS = 60.0  # an exit this long before the hang began is of an earlier one


def console_files(spec: str) -> dict[str, Path]:
    """Each node's agent console by its name ("node-a"), for a ``torchrun:`` spec."""
    directory = preset_argument(spec, "torchrun")
    if not directory:
        return {}
    root = Path(os.path.expanduser(directory))
    found: dict[str, Path] = {}
    for folder in (root, root.parent):
        try:
            entries = sorted(folder.glob(f"*{SUFFIX}"))[:MAX_CONSOLES]
        except OSError:
            continue
        for path in entries:
            if path.is_file():
                found.setdefault(path.name[:-len(SUFFIX)], path)
        if found:
            break
    return found


def failure_lines(files: dict[str, Path], since: float | None = None,
                  until: float | None = None) -> dict[str, list[str]]:
    """The agents' failure lines of each console, those stamped from ``EARLIER_SECONDS``
    before ``since`` up to ``until`` (POSIX seconds; None: no bound)."""
    low = None if since is None else local_clock(since) - EARLIER_SECONDS
    high = None if until is None else local_clock(until)
    ceiling = high if high is not None else local_clock(time.time())
    found: dict[str, list[str]] = {}
    for name, path in files.items():
        kept = []
        for line in _tail(path):
            if FAILED_WORDS not in line:
                continue
            stamp = line_time(line, ceiling)
            if stamp is not None and ((low is not None and stamp < low)
                                      or (high is not None and stamp > high)):
                continue
            kept.append(plain(line, LINE_CHARS))
        found[name] = kept
    return found


def _tail(path: Path) -> list[str]:
    """The last TAIL_BYTES of a console, opened as a regular file only (never a FIFO or a
    device a name was swapped for)."""
    try:
        fd = open_regular(path)
    except (OSError, ValueError):
        return []
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        data = os.pread(fd, TAIL_BYTES, max(0, size - TAIL_BYTES))
    except OSError:
        return []
    finally:
        os.close(fd)
    if FAILED_WORDS.encode() not in data:
        return []
    return data.decode("utf-8", "replace").splitlines()


def agent_failures(spec: str, since: float | None, until: float | None
                   ) -> dict[str, list[str]]:
    """The failure lines of the consoles a ``torchrun:`` spec finds (see the module)."""
    return failure_lines(console_files(spec), since, until)
