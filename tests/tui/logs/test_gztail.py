"""The end of a compressed log: only its last lines kept, several members, damage, size."""

from __future__ import annotations

import gzip
import os
import threading
import zlib
from pathlib import Path

import pytest
from ranktop.tui.logs import gztail
from ranktop.tui.logs.gztail import gz_tail


def text(start: int, count: int) -> bytes:
    return b"".join(b"[rank 3] step %d loss 2.137\n" % i for i in range(start, start + count))


def write_gz(path: Path, data: bytes) -> Path:
    path.write_bytes(gzip.compress(data))
    return path


def test_only_the_last_lines_are_kept(tmp_path: Path) -> None:
    path = write_gz(tmp_path / "rank3.log.1.gz", text(0, 200_000))  # about 6 MB of text
    assert gz_tail(path, 3, 1 << 30) == text(199_997, 3)


def test_a_short_file_is_given_whole(tmp_path: Path) -> None:
    path = write_gz(tmp_path / "rank3.log.1.gz", text(0, 5))
    assert gz_tail(path, 100, 1 << 20) == text(0, 5)


def test_bytes_bound_what_is_kept_when_lines_are_long(tmp_path: Path) -> None:
    long_lines = b"".join(b"%d " % i + b"x" * 100_000 + b"\n" for i in range(100))
    path = write_gz(tmp_path / "giant.log.1.gz", long_lines)
    tail = gz_tail(path, 100, 2 * gztail.PIECE)
    assert 2 * gztail.PIECE - 100_010 <= len(tail) <= 3 * gztail.PIECE
    assert tail.endswith(b"x\n") and long_lines.endswith(tail)
    assert tail.split(b" ", 1)[0].isdigit()  # starts at a whole line


def test_several_gzip_members_are_read_one_after_the_other(tmp_path: Path) -> None:
    path = tmp_path / "rank3.log.1.gz"
    path.write_bytes(gzip.compress(text(0, 3)) + gzip.compress(text(3, 3)))
    assert gz_tail(path, 10, 1 << 20) == text(0, 6)


def test_a_damaged_or_truncated_file_gives_what_came_before(tmp_path: Path) -> None:
    whole = gzip.compress(text(0, 1000), compresslevel=1)
    path = tmp_path / "rank3.log.1.gz"
    path.write_bytes(whole[: len(whole) // 2])
    tail = gz_tail(path, 2, 1 << 20)
    assert tail.count(b"\n") in (1, 2) and text(0, 1000).find(tail) > 0
    (tmp_path / "plain.log.1.gz").write_bytes(text(0, 3))
    assert gz_tail(tmp_path / "plain.log.1.gz", 2, 1 << 20) == b""


def test_too_big_missing_or_not_a_file_gives_nothing(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_gz(tmp_path / "rank3.log.1.gz", text(0, 1000))
    monkeypatch.setattr(gztail, "GZ_MAX_BYTES", 100)
    assert gz_tail(path, 2, 1 << 20) == b""
    monkeypatch.undo()
    assert gz_tail(tmp_path / "missing.gz", 2, 1 << 20) == b""
    (tmp_path / "dir.gz").mkdir()
    assert gz_tail(tmp_path / "dir.gz", 2, 1 << 20) == b""


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    path = write_gz(tmp_path / "rank3.log.1.gz", text(0, 3))
    assert gz_tail(path, 1, 1 << 20) == text(2, 1)
    path.write_bytes(gzip.compress(text(10, 4)))
    os.utime(path, ns=(1, 1))
    assert gz_tail(path, 1, 1 << 20) == text(13, 1)


def test_the_piece_size_does_not_change_the_result(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    data = text(0, 5000)
    path = write_gz(tmp_path / "rank3.log.1.gz", data)
    monkeypatch.setattr(gztail, "PIECE", 1000)
    assert gz_tail(path, 7, 1 << 20) == text(4993, 7)
    assert zlib.decompress(path.read_bytes(), wbits=31) == data


def test_a_rotated_copy_that_became_a_fifo_after_its_check_is_never_waited_on(tmp_path):
    """The file is checked (stat), then read: a FIFO put in its place between the two must
    not hold the reader. Should it hold, the test lets it go by opening the FIFO's other end."""
    path = tmp_path / "rank3.log.1.gz"
    os.mkfifo(path)
    answers: list[bytes] = []
    reader = threading.Thread(target=lambda: answers.append(gztail._tail(str(path), 1, 1, 5, 99)),
                              daemon=True)
    reader.start()
    reader.join(timeout=20)  # returns at once unless the FIFO holds the reader
    held = reader.is_alive()
    if held:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        reader.join()
    assert not held and answers == [b""]
