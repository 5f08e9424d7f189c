"""Opening a bundle is bounded: a path that is no folder and no regular file is refused before
it is opened, a tar is read member by member within budgets (a tar bomb is refused after
reading a small part of it), and a name found twice in it is refused."""

from __future__ import annotations

import io
import tarfile
import zlib
from pathlib import Path

import pytest
from ranktop.tui.bundle.read import CONSOLE, MAX_CONSOLE_BYTES, MAX_MEMBERS, read_bundle
from ranktop.tui.bundle.saved import NotABundle
from ranktop.tui.bundle.write import write_bundle

from tests.special_files import fifo, zero


def bytes_read() -> int:
    """What this process has read from files and pipes so far (the kernel's count)."""
    counts = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(counts["rchar"])


def refused(path, match: str) -> str:
    with pytest.raises(NotABundle, match=match) as error:
        read_bundle(path)
    said = str(error.value)
    assert "\n" not in said
    return said


def packed(path, members: list[tuple[str, bytes]]) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in members:
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    path.write_bytes(buffer.getvalue())


@pytest.fixture(scope="module")
def console(written) -> bytes:
    return (written / CONSOLE).read_bytes()


def test_a_packed_bundle_as_written_reads_back(tmp_path, written, console):
    path = write_bundle(tmp_path, "job", {"README.txt": b"x", CONSOLE: console}, packed=True)
    assert read_bundle(path).selected == 7


def test_a_fifo_and_a_link_to_dev_zero_are_refused_before_they_are_opened(tmp_path):
    fifo(tmp_path / "pipe.ranktop.tar.gz")
    zero(tmp_path / "zero.ranktop.tar.gz")
    assert "a named pipe (FIFO)" in refused(tmp_path / "pipe.ranktop.tar.gz", "FIFO")
    refused(tmp_path / "zero.ranktop.tar.gz", "is a device: a bundle is a folder or a .tar.gz")


def test_a_console_that_is_a_fifo_inside_a_folder_is_refused(tmp_path):
    (tmp_path / "b").mkdir()
    fifo(tmp_path / "b" / CONSOLE)
    refused(tmp_path / "b", "holds no readable console.msgpack")


def test_a_name_found_twice_is_refused_whichever_comes_first(tmp_path, console):
    packed(tmp_path / "two.tar.gz", [(f"b/{CONSOLE}", b"\x93hostile"), (f"b/{CONSOLE}", console)])
    refused(tmp_path / "two.tar.gz", "holds b/console.msgpack twice")
    packed(tmp_path / "mixed.tar.gz", [(CONSOLE, console), (f"./{CONSOLE}", b"\x93hostile")])
    refused(tmp_path / "mixed.tar.gz", "holds console.msgpack twice")
    packed(tmp_path / "readme.tar.gz", [("b/README.txt", b""), ("b/README.txt", b""),
                                        (f"b/{CONSOLE}", console)])
    refused(tmp_path / "readme.tar.gz", "holds b/README.txt twice")


def test_a_console_deep_inside_is_not_the_bundles(tmp_path, console):
    packed(tmp_path / "deep.tar.gz", [(f"a/b/{CONSOLE}", console)])
    refused(tmp_path / "deep.tar.gz", "holds no console.msgpack")


def test_two_thousand_empty_members_before_the_console_are_refused_at_once(tmp_path, console):
    packed(tmp_path / "many.tar.gz",
           [(f"b/{n:05d}", b"") for n in range(2_000)] + [(f"b/{CONSOLE}", console)])
    refused(tmp_path / "many.tar.gz", f"holds over {MAX_MEMBERS} files")


def zeros_member(size: int) -> bytes:
    """A .tar.gz whose one member is ``size`` bytes of zeros, ``console.msgpack`` after it,
    packed without the zeros ever being in memory: one flushed deflate block of 1 MiB of
    zeros, repeated (a full flush makes each block the same bytes)."""
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = tarfile.TarInfo("b/zeros")
    head.size = size
    start = pack.compress(head.tobuf()) + pack.flush(zlib.Z_FULL_FLUSH)
    mib = pack.compress(bytes(1 << 20)) + pack.flush(zlib.Z_FULL_FLUSH)
    assert pack.compress(bytes(1 << 20)) + pack.flush(zlib.Z_FULL_FLUSH) == mib
    console = tarfile.TarInfo(f"b/{CONSOLE}")
    end = pack.compress(console.tobuf() + bytes(1024)) + pack.flush()
    return start + mib * (size >> 20) + end


def test_eight_gib_of_zeros_before_the_console_are_refused_after_a_small_part_of_them(
        tmp_path):
    path = tmp_path / "bomb.ranktop.tar.gz"
    path.write_bytes(zeros_member(8 << 30))  # 8 MB on disk
    before = bytes_read()
    said = refused(path, "unpacks to over 512 MB")
    # refused once 512 MB are unpacked: about a sixteenth of the file read, not all 8 GiB
    # unpacked (which takes long enough on any machine, but how long depends on the machine)
    assert bytes_read() - before < path.stat().st_size // 4
    assert said == f"{path} unpacks to over 512 MB: not a bundle"


def test_a_console_over_the_bound_is_refused_by_its_size(tmp_path):
    """What 500,000,000 booleans take: refused from the member's header, never read."""
    path = tmp_path / "big.ranktop.tar.gz"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo(f"b/{CONSOLE}")
        info.size = MAX_CONSOLE_BYTES + 1
        tar.addfile(info)  # the header alone: the reader stops there
    path.write_bytes(buffer.getvalue())
    refused(path, "its console.msgpack is over 256 MB")
