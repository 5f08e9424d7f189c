"""logrotate's two modes, as the demo's log writer uses them."""

from __future__ import annotations

from pathlib import Path

import pytest
from ranktop.tui.simulator.rotation import KEEP, rotate, rotated


def log_file(tmp_path: Path, text: str = "one\ntwo\n") -> Path:
    path = tmp_path / "stderr.log"
    path.write_text(text)
    return path


def test_copytruncate_keeps_the_file_and_empties_it(tmp_path: Path) -> None:
    path = log_file(tmp_path)
    inode = path.stat().st_ino
    rotate(path, "copytruncate")
    assert rotated(path, 1).read_text() == "one\ntwo\n"
    assert path.read_text() == "" and path.stat().st_ino == inode
    with open(path, "a") as f:  # a writer appending by name goes on in the same file
        f.write("three\n")
    assert path.read_text() == "three\n" and path.stat().st_ino == inode


def test_rename_moves_the_file_and_creates_an_empty_one(tmp_path: Path) -> None:
    path = log_file(tmp_path)
    inode = path.stat().st_ino
    rotate(path, "rename")
    assert rotated(path, 1).read_text() == "one\ntwo\n"
    assert rotated(path, 1).stat().st_ino == inode  # the old file, renamed
    assert path.read_text() == "" and path.stat().st_ino != inode


@pytest.mark.parametrize("mode", ["copytruncate", "rename"])
def test_older_copies_shift_and_the_oldest_goes(tmp_path: Path, mode: str) -> None:
    path = log_file(tmp_path, "")
    for generation in range(KEEP + 2):
        path.write_text(f"generation {generation}\n")
        rotate(path, mode)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["stderr.log", *(f"stderr.log.{k}" for k in range(1, KEEP + 1))]
    newest = KEEP + 1
    assert [rotated(path, k).read_text() for k in range(1, KEEP + 1)] == [
        f"generation {newest - k + 1}\n" for k in range(1, KEEP + 1)]


def test_a_missing_file_is_skipped(tmp_path: Path) -> None:
    rotate(tmp_path / "stderr.log", "rename")
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such rotation mode"):
        rotate(log_file(tmp_path), "shred")
