"""The event log as outside data: records are capped, only a file's tail is read, and a
FIFO, a device, a folder, a symlink loop or an unreadable file is a warning, never a hang or
an exception."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.core.events import (
    FIELD_CHARS,
    MAX_RECORD_BYTES,
    SUMMARY_CHARS,
    Event,
    EventLog,
    decode_event,
    encode_event,
)

from tests.tui.properties import FEW

from .test_events import event, good_line

TEXT = st.text(max_size=3 * SUMMARY_CHARS)


@FEW
@given(st.binary(max_size=400) | st.lists(st.sampled_from(
    [b"{", b"}", b'"time":', b"1e999", b"[", b",", b'"rank":', b"null", b"\xff", b"9" * 50]),
    max_size=20).map(b"".join))
def test_any_line_is_an_event_or_a_value_error(line):
    try:
        assert isinstance(decode_event(line), Event)
    except ValueError as error:
        assert "\n" not in str(error)


@FEW
@given(TEXT, TEXT, TEXT)
def test_every_record_fits_the_cap_and_reads_back_cut_short(summary, host, job):
    written = event(host=host, job=job, summary=summary)
    line = encode_event(written)
    assert len(line) <= MAX_RECORD_BYTES
    read = decode_event(line.rstrip(b"\n"))
    assert read.summary == written.summary or (len(read.summary) == SUMMARY_CHARS
                                               and read.summary.endswith("…"))
    assert read.host == written.host or len(read.host) == FIELD_CHARS


def test_a_long_summary_is_cut_and_the_event_kept(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    log.append([event(summary="\x01" * 50_000)])
    (read,) = log.read()
    assert read.summary == "\x01" * (SUMMARY_CHARS - 1) + "…"
    assert log.warnings == []


def test_only_the_tail_of_a_huge_file_is_read(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = [good_line(at) for at in range(2000)]
    path.write_bytes(b"".join(lines))
    log = EventLog(path, read_bytes=100 * len(lines[0]) + 10)
    read = log.read()
    assert [e.time - read[0].time for e in read] == list(range(100))
    assert read[-1] == event(1999)
    assert len(log.warnings) == 1 and "only its last" in log.warnings[0]


def test_a_file_within_the_tail_is_read_whole_without_a_warning(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(good_line(0) + good_line(1))
    log = EventLog(path, read_bytes=len(good_line(0)) * 2)
    assert log.read() == [event(0), event(1)] and log.warnings == []


def test_binary_junk_is_warnings_not_events(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(os.urandom(200_000).replace(b"\n", b"") + b"\n" + good_line(5))
    log = EventLog(path)
    assert log.read() == [event(5)]
    assert any("longer than" in w or "not valid" in w for w in log.warnings)


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def loop(path: Path) -> Path:
    path.symlink_to(path.with_name("other"))
    path.with_name("other").symlink_to(path)
    return path


def unreadable(path: Path) -> Path:
    path.write_bytes(good_line(0))
    path.chmod(0)
    return path


def zero(path: Path) -> Path:
    path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize("make,says", [
    (fifo, "not a regular file"),
    (lambda p: p.mkdir() or p, "not a regular file"),
    (zero, "not a regular file"),
    (loop, "symbolic links"),
    (unreadable, "Permission denied"),
], ids=["fifo", "folder", "dev-zero", "symlink-loop", "unreadable"])
def test_a_log_that_is_no_regular_file_is_a_warning(tmp_path, make, says):
    if make is unreadable and os.geteuid() == 0:
        pytest.skip("root reads any file")
    path = make(tmp_path / "events.jsonl")
    log = EventLog(path)
    assert log.read() == []
    log.append([event()])
    assert log.warnings and all("\n" not in w for w in log.warnings)
    assert any(says in w for w in log.warnings), log.warnings
    assert any("could not append" in w for w in log.warnings)


def test_a_fifo_with_a_reader_gets_no_events(tmp_path):
    path = fifo(tmp_path / "events.jsonl")
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        log = EventLog(path)
        log.append([event()])
        assert os.read(reader, 100) == b""
        assert any("not a regular file" in w for w in log.warnings)
    finally:
        os.close(reader)
