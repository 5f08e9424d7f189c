"""A log's rotated predecessors: every naming scheme, newest first, and what is not one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ranktop.tui.logs.rotation import predecessors, rotated_suffix
from ranktop.tui.logs.tail import FileLog

NAME = "stderr.log"


def touch(directory: Path, name: str, age: float = 0.0) -> Path:
    path = directory / name
    path.write_text(f"{name}\n")
    when = 1_800_000_000 - age
    os.utime(path, (when, when))
    return path


@pytest.mark.parametrize("name", [
    "stderr.log.1",  # logrotate, RotatingFileHandler
    "stderr.log.12",
    "stderr.log-1",
    "stderr.log-20261122",  # logrotate dateext
    "stderr.log-2026112213",  # dateext by the hour
    "stderr.log-20261122-1732233600",  # dateformat -%Y%m%d-%s
    "stderr.log.2026-11-22",  # TimedRotatingFileHandler, daily
    "stderr.log.2026-11-22_13",
    "stderr.log.2026-11-22_13-05",
    "stderr.log.2026-11-22_13-05-07",
    "stderr.log.1.gz",
    "stderr.log-20261122.gz",
    "stderr.log.2026-11-22.gz",
])
def test_each_rotated_name_is_a_predecessor(tmp_path: Path, name: str) -> None:
    touch(tmp_path, NAME)
    rotated = touch(tmp_path, name, age=60)
    assert rotated_suffix(NAME, name) is not None
    assert predecessors(tmp_path / NAME) == [rotated]


@pytest.mark.parametrize("name", [
    "stderr.log",  # itself
    "stderr.log.bak",
    "stderr.log.1.tmp",
    "stderr.log1",  # no separator: another file
    "stderr.log.12345",
    "stderr.log.2026-11",
    "stdout.log.1",
    "xstderr.log.1",
    "stderr.log.gz",
])
def test_other_names_are_not_predecessors(tmp_path: Path, name: str) -> None:
    touch(tmp_path, NAME)
    touch(tmp_path, name, age=60)
    assert rotated_suffix(NAME, name) is None
    assert predecessors(tmp_path / NAME) == []


def test_newest_first_by_modification_time(tmp_path: Path) -> None:
    touch(tmp_path, NAME)
    third = touch(tmp_path, f"{NAME}.3.gz", age=300)
    first = touch(tmp_path, f"{NAME}.1", age=100)
    second = touch(tmp_path, f"{NAME}.2.gz", age=200)
    dated = touch(tmp_path, f"{NAME}-20261121", age=150)
    assert predecessors(tmp_path / NAME) == [first, dated, second, third]


def test_equal_times_fall_back_on_what_the_names_say(tmp_path: Path) -> None:
    touch(tmp_path, NAME)
    names = [f"{NAME}.2", f"{NAME}.10", f"{NAME}.1", f"{NAME}.1.gz"]
    paths = {name: touch(tmp_path, name, age=50) for name in names}
    assert predecessors(tmp_path / NAME) == [
        paths[f"{NAME}.1"], paths[f"{NAME}.2"], paths[f"{NAME}.10"], paths[f"{NAME}.1.gz"]]
    dates = [f"{NAME}-20261120", f"{NAME}-20261122", f"{NAME}-20261121"]
    for name in dates:
        touch(tmp_path, name, age=500)
    found = [p.name for p in predecessors(tmp_path / NAME)]
    assert found[-3:] == [f"{NAME}-20261122", f"{NAME}-20261121", f"{NAME}-20261120"]


def test_a_current_log_of_another_rank_is_not_a_predecessor(tmp_path: Path) -> None:
    mine = touch(tmp_path, "rank")
    other = touch(tmp_path, "rank-1", age=10)
    assert predecessors(mine) == [other]
    assert predecessors(mine, exclude={os.path.abspath(other)}) == []


def test_directories_and_unreadable_places_have_none(tmp_path: Path) -> None:
    touch(tmp_path, NAME)
    (tmp_path / f"{NAME}.1").mkdir()
    assert predecessors(tmp_path / NAME) == []
    assert predecessors(tmp_path / "missing" / NAME) == []


def test_a_tail_of_a_file_just_rotated_shows_the_predecessors_last_lines(tmp_path) -> None:
    current = tmp_path / "stderr.log"
    (tmp_path / "stderr.log.1").write_text("step 1\nCUDA error: unspecified launch failure\n")
    current.write_text("")  # copytruncate: the dead rank writes nothing more
    lines = [line.text for line in FileLog(current).tail(300)]
    assert lines == ["step 1", "CUDA error: unspecified launch failure",
                     "[ranktop: above, the last lines of stderr.log.1, before stderr.log was"
                     " rotated]"]
    current.write_text("".join(f"line {n}\n" for n in range(400)))
    full = [line.text for line in FileLog(current).tail(300)]
    assert full[0] == "line 100" and len(full) == 300  # enough of its own: no predecessor


def test_a_compressed_predecessor_is_read_too(tmp_path) -> None:
    import gzip

    with gzip.open(tmp_path / "stdout.log.1.gz", "wt") as older:
        older.write("step 7 loss 2.1\nstep 8 loss 2.1\n")
    (tmp_path / "stdout.log").write_text("step 9 loss 2.0\n")
    lines = [line.text for line in FileLog(tmp_path / "stdout.log").tail(3)]
    assert lines == ["step 8 loss 2.1", "[ranktop: above, the last lines of stdout.log.1.gz,"
                     " before stdout.log was rotated]", "step 9 loss 2.0"]
