"""Reading a file that someone else wrote: a config, a rank map, a dump, a log.

Such a path may name a FIFO (opening it for reading waits for a writer, for good), a device
(``/dev/zero`` never ends), a folder, or a file far larger than anything ranktop means to
read. ``read_regular`` opens without blocking, reads only a regular file, and only up to a
bound; every refusal is an ``OSError`` whose ``strerror`` says why in plain words.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(OSError):
    """A FIFO, a device, a socket or a folder where a file was expected."""


class FileTooLarge(OSError):
    """A regular file larger than the reader's bound."""


def open_regular(path: Path | str) -> int:
    """A descriptor open for reading on a regular file (the caller closes it)."""
    fd = os.open(path, _FLAGS)
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else (
            "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "no regular file")
        raise NotRegularFile(errno.EINVAL, f"not a regular file: {kind}")
    return fd


def read_regular(path: Path | str, max_bytes: int) -> bytes:
    """The whole of a regular file of at most ``max_bytes``."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise FileTooLarge(errno.EFBIG, f"too large ({size:,} bytes, at most"
                                            f" {max_bytes:,} are read)")
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew while being read
        raise FileTooLarge(errno.EFBIG, f"too large (over {max_bytes:,} bytes)")
    return data


def modified(path: Path | str) -> float:
    """A file's modification time; 0 when it cannot be read (gone, or not allowed)."""
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
