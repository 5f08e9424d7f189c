"""A bundle on disk: ``<job>-<UTC time>.ranktop``, a folder, or the same files in one
``.tar.gz``. It appears whole or not at all (written under a temporary name, then renamed),
never replaces anything (a name taken gets ``-2``, ``-3``…), and is readable by its owner
only unless the user chose otherwise (``[bundle] mode``): it holds the job's log lines."""

from __future__ import annotations

import errno
import grp
import io
import os
import pwd
import re
import shlex
import stat
import tarfile
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

SUFFIX = ".ranktop"
PACKED_SUFFIX = ".ranktop.tar.gz"
MAX_NAMES = 999
# Each sharing of ``[bundle] mode``: the mode of its files and of its folders.
MODES = {"owner": (0o600, 0o700), "group": (0o640, 0o750), "everyone": (0o644, 0o755)}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def bundle_name(job: str, moment: float) -> str:
    """``train-llm-20261124T031240Z``: the job (as a file name can hold it) and the moment."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(moment))
    safe = _UNSAFE.sub("-", job).strip("-.")[:80] or "job"
    return f"{safe}-{stamp}"


def write_bundle(folder: Path, name: str, files: Mapping[str, bytes], packed: bool,
                 sharing: str = "owner") -> Path:
    """Write ``files`` (relative path -> content) as the bundle ``name`` in ``folder``,
    readable as ``sharing`` says (``MODES``); its path. OSError when it cannot be written
    (nothing is left behind then)."""
    folder.mkdir(parents=True, exist_ok=True)
    suffix = PACKED_SUFFIX if packed else SUFFIX
    file_mode, folder_mode = MODES[sharing]
    with tempfile.TemporaryDirectory(prefix=f".{name}.", dir=folder) as scratch:
        staged = Path(scratch) / "bundle"
        if packed:
            staged.write_bytes(_tar(f"{name}{SUFFIX}", files))
            staged.chmod(file_mode)
        else:
            _fill(staged, files, file_mode, folder_mode)
        return _rename_new(staged, folder, name, suffix)


def _fill(target: Path, files: Mapping[str, bytes], file_mode: int, folder_mode: int) -> None:
    # Created owner-only, then given their mode: the umask never widens nor narrows it.
    target.mkdir(mode=0o700)
    for relative, content in files.items():
        path = target / relative
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(content)
        path.chmod(file_mode)
    for folder in sorted({p.parent for p in (target / r for r in files)} | {target},
                         key=lambda p: len(p.parts), reverse=True):
        folder.chmod(folder_mode)


def _tar(top: str, files: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=9) as tar:
        for relative, content in files.items():
            info = tarfile.TarInfo(f"{top}/{relative}")
            info.size, info.mtime, info.mode = len(content), now, 0o600
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def _rename_new(staged: Path, folder: Path, name: str, suffix: str) -> Path:
    """Move ``staged`` to the first free ``name[-N]suffix`` in ``folder``."""
    for attempt in range(1, MAX_NAMES + 1):
        target = folder / (f"{name}{suffix}" if attempt == 1 else f"{name}-{attempt}{suffix}")
        if os.path.lexists(target):
            continue
        try:
            if staged.is_dir():
                os.rename(staged, target)
            else:
                os.link(staged, target)  # unlike a rename, never replaces a file
        except OSError as error:
            if error.errno in (errno.EEXIST, errno.ENOTEMPTY):  # taken meanwhile
                continue
            raise
        return target
    raise FileExistsError(f"{MAX_NAMES} bundles named {name}{suffix} are in {folder} already")


def sharing(path: Path) -> str:
    """Who can read the bundle at ``path``, and how to let a colleague on this machine read
    it: what the notice after writing says ("" if it is gone already)."""
    try:
        info = path.stat()
    except OSError:
        return ""
    mode = stat.S_IMODE(info.st_mode)
    owner = _name(pwd.getpwuid, info.st_uid)
    if mode & 0o004:
        who = "anyone on this machine"
    elif mode & 0o040:
        who = f"{owner} and group {_name(grp.getgrgid, info.st_gid)}"
    else:
        who = f"{owner} only"
    change = "chmod -R go+rX" if path.is_dir() else "chmod go+r"
    return (f"readable by {who} (mode {mode:04o}: it holds the job's log lines); to share "
            f"it here: {change} {shlex.quote(str(path))}, or copy it to whoever needs it")


def _name(look_up, number: int) -> str:
    try:
        return look_up(number)[0]
    except KeyError:  # no name for it on this machine
        return str(number)
