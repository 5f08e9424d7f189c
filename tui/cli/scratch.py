"""The folders ranktop makes for itself (the demo's ranks' logs and dumps, its throwaway
event log), removed at exit without holding the exit up.

A demo of 100,000 ranks leaves 400,000 files, which take minutes to remove on a busy disk:
the removal runs in a process of its own, which ranktop waits for briefly (a small demo's
folder is gone when ranktop exits) and which goes on after ranktop has exited.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

REMOVE_WAIT_SECONDS = 1.0
_REMOVING: set[str] = set()


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[str]:
    """A new temporary folder, removed (``remove_soon``) when the block ends."""
    folder = tempfile.mkdtemp(prefix=prefix)
    try:
        yield folder
    finally:
        remove_soon(folder)


def remove_soon(folder: str, wait: float = REMOVE_WAIT_SECONDS) -> None:
    """Remove ``folder``, waiting at most ``wait`` seconds: the rest is left to a process
    in a session of its own, so neither the exit nor a hung-up terminal stops it. A folder
    already being removed (the exit's cleanups and the block's end both ask) is left be."""
    if folder in _REMOVING:
        return
    _REMOVING.add(folder)
    try:
        remover = subprocess.Popen(["rm", "-rf", "--", folder], start_new_session=True,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
    except OSError:  # no rm: remove it here
        shutil.rmtree(folder, ignore_errors=True)
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        remover.wait(wait)
