"""A bundle read back for ``ranktop open``: its ``console.msgpack``, from the folder or from
inside the ``.tar.gz`` (read in memory, never unpacked onto the disk). Anything else is a
``NotABundle`` with one line saying why."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

from ranktop.tui.bundle.saved import NotABundle, Saved, decoded
from ranktop.tui.core.outside_file import open_regular

CONSOLE = "console.msgpack"
MAX_CONSOLE_BYTES = 512 * 1024 * 1024  # 16,384 ranks take a few MB


def read_bundle(path: Path) -> Saved:
    """The console saved in the bundle at ``path`` (a folder or a .tar.gz)."""
    if path.is_dir():
        return decoded(_file_bytes(path / CONSOLE))
    if not path.exists():
        raise NotABundle(f"{path} does not exist")
    try:
        with tarfile.open(path, mode="r:*") as tar:
            return decoded(_member_bytes(tar, path))
    except (tarfile.TarError, EOFError, OSError):
        raise NotABundle(f"{path} is neither a bundle's folder nor a .tar.gz of one"
                         ) from None


def _file_bytes(path: Path) -> bytes:
    try:
        with os.fdopen(open_regular(path), "rb") as file:
            data = file.read(MAX_CONSOLE_BYTES + 1)
    except OSError as error:
        raise NotABundle(f"{path.parent} holds no readable {CONSOLE}: it is not a bundle "
                         f"({error.strerror or error})") from None
    if len(data) > MAX_CONSOLE_BYTES:
        raise NotABundle(f"{path} is over {MAX_CONSOLE_BYTES // 2**20} MB: not a bundle's")
    return data


def _member_bytes(tar: tarfile.TarFile, path: Path) -> bytes:
    for member in tar:
        if member.name.endswith(f"/{CONSOLE}") or member.name == CONSOLE:
            if not member.isfile() or member.size > MAX_CONSOLE_BYTES:
                break
            found = tar.extractfile(member)
            if found is not None:
                return found.read()
    raise NotABundle(f"{path} holds no {CONSOLE}: it is not a bundle")
