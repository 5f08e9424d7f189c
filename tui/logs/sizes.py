"""Where a log's reads end in its files: each local file's size, saved beside a log's
excerpt in a bundle so a reader knows how far the excerpt goes. A log read by an engine in
another process says its own (``engine.remote_log.RemoteLog.sizes``): a bundle holds the
same whichever engine wrote it."""

from __future__ import annotations

import contextlib
import os

from .merged import MergedLog
from .tail import FileLog, LogSource


def file_sizes(log: LogSource) -> dict[str, int]:
    """The size of each local file ``log`` reads, by path."""
    files = log.logs if isinstance(log, MergedLog) else [log]
    found = {}
    for each in files:
        if isinstance(each, FileLog):
            with contextlib.suppress(OSError):
                found[str(each.path)] = os.stat(each.path).st_size
    return found


def sizes_of(log: LogSource) -> dict[str, int]:
    """``log``'s own account of its files' sizes where it has one, else its local files'."""
    said = getattr(log, "sizes", None)
    return said() if callable(said) else file_sizes(log)
