"""Each rank's dump file from the user's pattern."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.flight.dump_paths import PatternError, check_pattern, find_dumps

from tests.tui.properties import FEW


def touch(path: Path, mtime: float = 1_000_000.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    os.utime(path, (mtime, mtime))
    return path


def test_a_pattern_with_rank_and_globs_finds_each_rank(tmp_path: Path) -> None:
    zero = touch(tmp_path / "node-a" / "trace_0")
    one = touch(tmp_path / "node-b" / "trace_1")
    touch(tmp_path / "node-b" / "trace_1.pipe")  # the on-demand pipe is no dump
    touch(tmp_path / "node-b" / "trace_x")
    touch(tmp_path / "node-b" / "trace_9")  # outside the job
    found = find_dumps(str(tmp_path / "node-*" / "trace_{rank}"), world_size=4)
    assert found == {0: zero, 1: one}


def test_a_folder_means_pytorchs_file_names_old_and_new(tmp_path: Path) -> None:
    new = touch(tmp_path / "comm_lib_trace_rank_0")
    old = touch(tmp_path / "nccl_trace_rank_1")
    touch(tmp_path / "other_2")
    assert find_dumps(str(tmp_path), 3) == {0: new, 1: old}


def test_any_other_path_is_a_prefix(tmp_path: Path) -> None:
    dump = touch(tmp_path / "fr_rank_2")
    assert find_dumps(str(tmp_path / "fr_rank_"), 3) == {2: dump}


def test_the_newest_file_of_a_rank_is_its_dump(tmp_path: Path) -> None:
    touch(tmp_path / "a" / "t0", mtime=100.0)
    newer = touch(tmp_path / "b" / "t0", mtime=200.0)
    assert find_dumps(str(tmp_path / "*" / "t{rank}"), 1) == {0: newer}


def test_a_character_class_and_a_rank_twice(tmp_path: Path) -> None:
    good = touch(tmp_path / "r3" / "t3")
    touch(tmp_path / "r3" / "t4")  # the two numbers disagree
    touch(tmp_path / "q3" / "t3")  # outside the class
    assert find_dumps(str(tmp_path / "[rs]{rank}" / "t{rank}"), 8) == {3: good}


@pytest.mark.parametrize("pattern", ["/x/{host}/t{rank}", "   ", "/x/{}"])
def test_a_bad_pattern_is_one_error(pattern: str) -> None:
    with pytest.raises(PatternError):
        check_pattern(pattern)


def test_a_missing_folder_finds_nothing(tmp_path: Path) -> None:
    assert find_dumps(str(tmp_path / "nowhere" / "t{rank}"), 4) == {}


@FEW
@given(st.lists(st.sampled_from([*"ab*?[]!{}/.\\-_0", "{rank}", "\x00", "é", "**"]),
                max_size=12).map("".join))
def test_any_pattern_finds_files_or_raises_pattern_error(tmp_path_factory, text: str) -> None:
    root = tmp_path_factory.getbasetemp() / "any-pattern"
    touch(root / "a0" / "b1")
    try:
        # under root: a pattern starting "//" would be absolute and glob the whole machine,
        # other tests' files coming and going under it
        found = find_dumps(str(root / text.lstrip("/")), 4)
    except PatternError:
        return
    assert all(0 <= rank < 4 and path.exists() for rank, path in found.items())


@pytest.mark.parametrize("pattern", ["t[b-a]{rank}", "t\x00{rank}"])
def test_a_glob_that_cannot_be_used_is_a_pattern_error(tmp_path: Path, pattern: str) -> None:
    touch(tmp_path / "t1")
    with pytest.raises(PatternError):
        find_dumps(str(tmp_path / pattern), 4)
