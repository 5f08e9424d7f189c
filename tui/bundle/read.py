"""A bundle read back for ``ranktop open``: its ``console.msgpack``, from the folder or from
inside the ``.tar.gz`` (read in memory as a stream, never unpacked onto the disk), then
checked and decoded (``load.loaded``). Anything else is a ``NotABundle`` with one line
saying why.

A bundle is a file from a stranger, so opening it is bounded: the path must be a folder or a
regular file before anything is opened (a FIFO would wait for a writer for good, a link to
``/dev/zero`` never ends); a tar is read member by member with a budget on the members
scanned and the bytes expanded (a tar bomb is refused within about a second), the console
taken by its name, and a name found twice refused (which of the two was meant?)."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zlib
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from ..core.outside_file import open_regular
from .load import loaded
from .saved import NotABundle, Saved

CONSOLE = "console.msgpack"
MAX_CONSOLE_BYTES = 256 * 1024 * 1024  # 16,384 ranks take a few MB
MAX_EXPANDED_BYTES = 2 * MAX_CONSOLE_BYTES  # every member of a tar together, unpacked
MAX_MEMBERS = 64  # a bundle has eight files
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20


def read_bundle(path: Path) -> Saved:
    """The console saved in the bundle at ``path`` (a folder or a .tar.gz)."""
    kind = _kind(path)
    if kind == "folder":
        return loaded(_file_bytes(path / CONSOLE))
    try:
        fd = open_regular(path)
    except OSError as error:
        raise NotABundle(f"{path} cannot be read ({error.strerror or error})") from None
    with os.fdopen(fd, "rb") as file:
        return loaded(_console_in_tar(file, path))


def _kind(path: Path) -> str:
    """"folder" or "file"; NotABundle for anything else, before it is opened."""
    try:
        mode = path.stat().st_mode  # through links: a link to /dev/zero is a device
    except OSError as error:
        if isinstance(error, FileNotFoundError):
            raise NotABundle(f"{path} does not exist") from None
        raise NotABundle(f"{path} cannot be read ({error.strerror or error})") from None
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISREG(mode):
        return "file"
    what = "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else (
        "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "no regular file")
    raise NotABundle(f"{path} is {what}: a bundle is a folder or a .tar.gz")


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


class _Budget(io.RawIOBase):
    """A tar's bytes, unpacked from gzip where packed, that end in an error once more than
    ``MAX_EXPANDED_BYTES`` have been read."""

    def __init__(self, file: BinaryIO) -> None:
        self.file = file
        self.read_so_far = 0
        self.inflate = zlib.decompressobj(wbits=31) if file.peek(2)[:2] == _GZIP_MAGIC \
            else None
        self.left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._next(len(buffer))
        self.read_so_far += len(data)
        if self.read_so_far > MAX_EXPANDED_BYTES:
            raise _OverBudget(f"unpacks to over {MAX_EXPANDED_BYTES // 2**20} MB")
        buffer[:len(data)] = data
        return len(data)

    def _next(self, wanted: int) -> bytes:
        if self.inflate is None:
            return self.file.read(wanted)
        while not self.left:
            if self.inflate.eof:
                return b""
            packed = self.inflate.unconsumed_tail or self.file.read(_CHUNK)
            if not packed:
                return b""
            self.left = self.inflate.decompress(packed, _CHUNK)
        data, self.left = self.left[:wanted], self.left[wanted:]
        return data


class _OverBudget(Exception):
    """The tar holds more than a bundle's: said in one line."""


def _console_in_tar(file: BinaryIO, path: Path) -> bytes:
    try:
        stream = io.BufferedReader(_Budget(file), _CHUNK)
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            return _console_member(tar, path)
    except _OverBudget as error:
        raise NotABundle(f"{path} {error}: not a bundle") from None
    except (tarfile.TarError, EOFError, OSError, zlib.error):
        raise NotABundle(f"{path} is neither a bundle's folder nor a .tar.gz of one"
                         ) from None


def _console_member(tar: tarfile.TarFile, path: Path) -> bytes:
    """The console's bytes, read as the tar streams by: every member is looked at (within
    the budgets), so that a second member of the same name is seen."""
    names: set[str] = set()
    found = None
    for count, member in enumerate(tar, start=1):
        if count > MAX_MEMBERS:
            raise NotABundle(f"{path} holds over {MAX_MEMBERS} files: not a bundle")
        name = str(PurePosixPath(member.name))
        if name in names:
            raise NotABundle(f"{path} holds {name} twice: not a bundle (which is meant?)")
        names.add(name)
        if _is_console(name):
            if found is not None:
                raise NotABundle(f"{path} holds two {CONSOLE}: not a bundle")
            found = _member_bytes(tar, member, path)
    if found is None:
        raise NotABundle(f"{path} holds no {CONSOLE}: it is not a bundle")
    return found


def _is_console(name: str) -> bool:
    """``console.msgpack``, at the top or in the bundle's one folder."""
    parts = PurePosixPath(name).parts
    return parts[-1:] == (CONSOLE,) and len(parts) <= 2


def _member_bytes(tar: tarfile.TarFile, member: tarfile.TarInfo, path: Path) -> bytes:
    if not member.isfile():
        raise NotABundle(f"{path}: its {CONSOLE} is no regular file: not a bundle")
    if member.size > MAX_CONSOLE_BYTES:
        raise NotABundle(f"{path}: its {CONSOLE} is over {MAX_CONSOLE_BYTES // 2**20} MB: "
                         "not a bundle's")
    extracted = tar.extractfile(member)
    assert extracted is not None  # a regular member always has its bytes
    return extracted.read()
