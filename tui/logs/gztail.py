"""The end of a gzip-compressed log (a rotated predecessor such as ``rank3.log.1.gz``).

A compressed file cannot be read from its end: it is decompressed from its start, a piece
at a time, keeping only the end. That costs time in proportion to the file, so files over
``GZ_MAX_BYTES`` (compressed) are skipped, and what was found is kept while the file is
unchanged (same size and modification time): rotated files do not change.
"""

from __future__ import annotations

import functools
import os
import stat
import zlib
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from ..core.outside_file import read_regular

GZ_MAX_BYTES = 8 * 1024 * 1024
PIECE = 1024 * 1024  # decompressed bytes per step
_CACHE = 32


def gz_tail(path: Path, lines: int, max_bytes: int) -> bytes:
    """The last ``lines`` lines of a gzip file's text, whole, or fewer when they would take
    more than ``max_bytes`` (give or take a piece). Empty when the file is too big,
    unreadable or not gzip; a truncated or damaged file gives what came before the damage."""
    try:
        found = os.stat(path)
    except OSError:
        return b""
    if not stat.S_ISREG(found.st_mode) or found.st_size > GZ_MAX_BYTES:
        return b""
    return _tail(str(path), found.st_size, found.st_mtime_ns, lines, max_bytes)


@functools.lru_cache(maxsize=_CACHE)
def _tail(path: str, size: int, mtime_ns: int, lines: int, max_bytes: int) -> bytes:
    try:
        compressed = read_regular(path, GZ_MAX_BYTES)  # it may have become a FIFO since
    except OSError:
        return b""
    kept: deque[tuple[bytes, int]] = deque()  # pieces and their newlines
    kept_bytes = kept_lines = 0
    cut = False
    for piece in _pieces(compressed):
        kept.append((piece, piece.count(b"\n")))
        kept_bytes += len(piece)
        kept_lines += kept[-1][1]
        while len(kept) > 1 and (kept_lines - kept[0][1] > lines
                                 or kept_bytes - len(kept[0][0]) >= max_bytes):
            first, newlines = kept.popleft()
            kept_bytes -= len(first)
            kept_lines -= newlines
            cut = True
    tail = b"".join(piece for piece, _ in kept)
    start = _start_of_last(tail, lines)
    if start == 0 and cut:
        start = tail.find(b"\n") + 1  # the first line began in a dropped piece
    return tail[start:]


def _start_of_last(text: bytes, lines: int) -> int:
    """Where the last ``lines`` lines of ``text`` start (0 when it holds no more)."""
    pos = len(text) - 1 if text.endswith(b"\n") else len(text)
    for _ in range(max(lines, 0)):
        pos = text.rfind(b"\n", 0, pos)
        if pos < 0:
            return 0
    return pos + 1


def _pieces(data: bytes) -> Iterator[bytes]:
    """The decompressed text, PIECE bytes at a time, member after member."""
    while data:
        stream = zlib.decompressobj(wbits=31)
        try:
            while True:
                piece = stream.decompress(data, PIECE)
                if piece:
                    yield piece
                data = stream.unconsumed_tail
                if stream.eof or (not data and len(piece) < PIECE):
                    break
        except zlib.error:
            return
        data = stream.unused_data if stream.eof else b""
