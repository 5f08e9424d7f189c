"""What happens when ranktop itself fails: one clear line, a non-zero exit, the details kept.

A crash must never look like a quit: whatever wraps ranktop (a script, a tmux hook) reads the
exit status. The traceback goes to a file beside the event log, without local variables
(they hold the settings, secrets among them), and the terminal gets one line naming it.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

from ..core.events import default_log_path
from ..core.text import plain

CRASH_EXIT = 70  # sysexits' EX_SOFTWARE: an internal error, never a verdict on the job
# Whoever read the output stopped reading (`ranktop jobs --json | head -1`): the status a
# process ended by SIGPIPE has in a shell, as `yes | head` gives.
READER_GONE_EXIT = 128 + 13


def reader_gone() -> int:
    """The output's reader went away: nothing is wrong with ranktop, so nothing is said.
    Standard output is pointed at /dev/null, so the flush at exit fails no more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file behind stdout: nothing left to flush into
        pass
    return READER_GONE_EXIT


def report_crash(error: BaseException, command: str = "ranktop") -> int:
    """Say on stderr that ranktop failed, keep the traceback; the exit status to return."""
    kept = _keep_traceback(error)
    where = f"; details in {kept}" if kept else ""
    message = plain(f"{error.__class__.__name__}: {error}", 300)
    print(f"{command}: internal error: {message}{where}", file=sys.stderr)
    return CRASH_EXIT


def _keep_traceback(error: BaseException) -> Path | None:
    path = default_log_path().parent / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
    text = "".join(traceback.format_exception(error)).encode("utf-8", errors="replace")
    try:
        # The user's alone, as the event log beside it: a traceback may name hosts and paths.
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(text)
    except OSError:
        return None
    return path
