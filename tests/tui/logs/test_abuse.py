"""Logs under abuse: a FIFO, a symlink loop, /dev/zero, a folder, a file replaced by a folder
while followed, a file that cannot be read. Each is a status (or no lines), at once: never a
hang, never an exception."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from ranktop.tui.core.model import RankMap
from ranktop.tui.logs.collect import lines_by_rank
from ranktop.tui.logs.tail import FileLog

from tests.special_files import fifo, folder, loop, zero

GRID = RankMap.grid(["host-1"], 2, source="test")


ABUSES = pytest.mark.parametrize("make,says", [
    (fifo, "not a regular file"), (zero, "not a regular file"),
    (folder, "not a regular file"), (loop, "symbolic links"),
], ids=["fifo", "dev-zero", "folder", "symlink-loop"])


@ABUSES
def test_a_log_that_is_no_regular_file_is_a_status(tmp_path, make, says):
    path = tmp_path / "rank0.log"
    make(path)
    log = FileLog(path)
    assert log.tail(100) == [] and log.follow() == []
    assert log.status().startswith("error: ") and says in log.status()


@ABUSES
def test_collecting_such_a_log_gives_its_rank_no_lines(tmp_path, make, says):
    path = tmp_path / "rank0.log"
    make(path)
    shared = tmp_path / "both.log"
    make(shared) if make is not loop else shared.symlink_to(path)
    assert lines_by_rank({0: [path], 1: [shared]}, GRID, 50) == {0: [], 1: []}


def test_a_file_replaced_by_a_folder_while_followed_is_a_status(tmp_path):
    path = tmp_path / "rank0.log"
    path.write_bytes(b"one\ntwo\n")
    log = FileLog(path)
    assert [line.text for line in log.tail(10)] == ["one", "two"]
    path.unlink()
    path.mkdir()
    for _ in range(3):
        assert log.follow() == []
    assert log.status() != ""


def test_a_log_that_cannot_be_read_is_a_status(tmp_path, monkeypatch):
    path = tmp_path / "rank0.log"
    path.write_bytes(b"one\n")
    real_open = os.open

    def refused(name, flags, *args):
        if Path(name) == path:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real_open(name, flags, *args)

    monkeypatch.setattr(os, "open", refused)
    log = FileLog(path)
    assert log.tail(10) == []
    assert log.status() == f"error: {os.strerror(errno.EACCES)}"
    assert lines_by_rank({0: [path]}, GRID, 10) == {0: []}
