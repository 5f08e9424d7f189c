"""logrotate's two ways of rotating a log that a process is still writing, for the demo's logs.

copytruncate  copy ``name`` to ``name.1``, then truncate ``name`` to 0 bytes: the writer's
              file (and inode) stays, and starts again from nothing
rename        rename ``name`` to ``name.1`` and create an empty ``name`` (logrotate's
              ``create``): a reader holding the old file sees no more lines in it

Either way older copies shift first (``name.1`` to ``name.2`` ...), and the oldest beyond
KEEP is dropped, as with ``rotate 4``. A missing file is skipped (``missingok``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

KEEP = 4
MODES = ("copytruncate", "rename")


def rotated(path: Path, generation: int) -> Path:
    """``name.N``: the Nth newest rotated copy of ``path``."""
    return path.with_name(f"{path.name}.{generation}")


def rotate(path: Path, mode: str) -> None:
    """Rotate one log file, ``mode`` "copytruncate" or "rename"."""
    if mode not in MODES:
        raise ValueError(f"no such rotation mode: {mode!r}")
    if not path.exists():
        return
    for generation in range(KEEP - 1, 0, -1):
        older = rotated(path, generation)
        if older.exists():
            older.replace(rotated(path, generation + 1))
    if mode == "copytruncate":
        shutil.copyfile(path, rotated(path, 1))
        os.truncate(path, 0)
    else:
        path.replace(rotated(path, 1))
        path.touch()
