"""The anomaly event log: round trips, filters, rotation, bad lines, concurrency, bad disks."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from ranktop.tui.core.events import Event, EventLog, default_log_path

ROOT = Path(__file__).resolve().parents[3]
T0 = 1_800_000_000.0


def event(at: float = 0.0, rank: int | None = 3, job: str = "llama-70b", **changes) -> Event:
    base = Event(
        time=T0 + at,
        state="start",
        kind="straggler",
        severity="major",
        rank=rank,
        host="node-007" if rank is not None else "",
        gpu=rank % 8 if rank is not None else None,
        job=job,
        summary="compute 1.45x median (1.16 s vs 0.80 s)",
    )
    return replace(base, **changes)


def good_line(at: float = 0.0) -> bytes:
    record = {**event(at).__dict__}
    return (json.dumps(record) + "\n").encode()


def assert_whole_lines(path: Path) -> list[dict]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.splitlines()]


# Round trip and format


def test_round_trip(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    events = [
        event(0),
        event(1, state="resolve", severity="critical", source="other-tool"),
        event(2, rank=None, kind="loss", summary="loss spike 4.2 → 9.1"),
    ]
    log.append(events)
    assert log.read() == events
    assert log.warnings == []


def test_lines_are_sorted_keys_and_raw_utf8(tmp_path):
    path = tmp_path / "events.jsonl"
    EventLog(path).append([event(summary="température 91 °C")])
    line = path.read_bytes().splitlines()[0]
    keys = list(json.loads(line, object_pairs_hook=lambda pairs: [k for k, _ in pairs]))
    assert keys == sorted(keys)
    assert "température 91 °C".encode() in line


def test_hostile_values_are_escaped_and_returned_unaltered(tmp_path):
    path = tmp_path / "events.jsonl"
    summary = "\x1b[2J\x1b]0;pwned\x07 line\nbreak\r\x00 \u2028 \x85 \x9b"
    events = [event(0, summary=summary), event(1, host="node-\udcff", job="j\tob")]
    log = EventLog(path)
    log.append(events)
    data = path.read_bytes()
    assert data.count(b"\n") == 2
    assert b"\x1b" not in data and b"\x00" not in data and b"\r" not in data
    assert log.read() == events


def test_read_returns_time_order_across_appends(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    log.append([event(5), event(1)])
    log.append([event(3)])
    assert [e.time - T0 for e in log.read()] == [1, 3, 5]


def test_missing_file_is_empty_history(tmp_path):
    log = EventLog(tmp_path / "nowhere" / "events.jsonl")
    assert log.read() == []
    assert log.warnings == []


def test_empty_append_creates_nothing(tmp_path):
    path = tmp_path / "state" / "events.jsonl"
    EventLog(path).append([])
    assert not path.exists()


def test_file_and_folder_are_private(tmp_path):
    path = tmp_path / "state" / "events.jsonl"
    EventLog(path).append([event()])
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_non_finite_time_is_skipped_with_a_warning(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    log.append([event(time=float("nan")), event(1)])
    assert log.read() == [event(1)]
    assert len(log.warnings) == 1 and "not written" in log.warnings[0]


# Filters


def test_filters(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    a, b = event(0, rank=1), event(10, rank=2)
    c, d = event(20, rank=1, job="other"), event(30, rank=None)
    log.append([a, b, c, d])
    assert log.read(since=T0 + 10) == [b, c, d]  # since is inclusive
    assert log.read(rank=1) == [a, c]
    assert log.read(job="llama-70b") == [a, b, d]
    assert log.read(since=T0 + 5, rank=1, job="other") == [c]
    assert log.read(since=T0 + 31) == []


# Rotation


@pytest.mark.parametrize("keep", [1, 3])
def test_rotation_keeps_keep_files_and_older_history(tmp_path, keep):
    path = tmp_path / "events.jsonl"
    line_bytes = len(good_line())
    log = EventLog(path, max_bytes=4 * line_bytes, keep=keep)
    written = [event(i) for i in range(60)]
    for one in written:
        log.append([one])
    numbered = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock"))
    assert numbered == ["events.jsonl"] + [f"events.jsonl.{i}" for i in range(1, keep + 1)]
    for name in numbered:
        assert (tmp_path / name).stat().st_size <= 5 * line_bytes
    history = log.read()
    in_current = len(assert_whole_lines(path))
    assert len(history) > in_current  # the rotated files are read too
    assert history == written[-len(history) :]  # a contiguous, ordered tail
    assert history[0] != written[0]  # the oldest file was dropped
    assert log.warnings == []


def test_no_rotation_at_or_below_the_limit(tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(path, max_bytes=3 * len(good_line()))
    for i in range(4):
        log.append([event(i)])
    assert not (tmp_path / "events.jsonl.1").exists()
    log.append([event(4)])
    assert len(assert_whole_lines(tmp_path / "events.jsonl.1")) == 4
    assert len(log.read()) == 5


# Bad lines


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b'{"time": 1, "state": \n', "not valid JSON"),
        (b"\xff\xfe garbage\n", "not valid UTF-8"),
        (b"[1, 2, 3]\n", "not a JSON object"),
        (good_line().replace(b'"kind": "straggler", ', b""), "missing field 'kind'"),
        (good_line().replace(b'"rank": 3', b'"rank": "3"'), "field 'rank' has the wrong type"),
        (good_line().replace(b'"rank": 3', b'"rank": true'), "field 'rank' has the wrong type"),
        (good_line().replace(b'"gpu": 3', b'"gpu": 1.5'), "field 'gpu' has the wrong type"),
        (good_line().replace(b'"time": 1800000000.0', b'"time": NaN'), "not finite"),
        (good_line().replace(b'"time": 1800000000.0', b'"time": 1e999'), "not finite"),
        (good_line().replace(b'"time": 1800000000.0', b'"time": ' + b"9" * 400), "out of range"),
        (b"[" * 10_000 + b"\n", "not valid JSON"),  # nested past the recursion limit
        (b"[" * 100_000 + b"\n", "longer than 16,384 bytes"),
    ],
)
def test_corrupt_line_is_skipped_with_a_warning(tmp_path, bad, reason):
    path = tmp_path / "events.jsonl"
    path.write_bytes(good_line(0) + bad + good_line(1))
    log = EventLog(path)
    assert log.read() == [event(0), event(1)]
    assert len(log.warnings) == 1
    assert log.warnings[0].startswith("events.jsonl line 2: ")
    assert reason in log.warnings[0]


def test_bad_line_in_a_rotated_file_names_that_file(tmp_path):
    (tmp_path / "events.jsonl.2").write_bytes(good_line(0) + b"{oops\n")
    (tmp_path / "events.jsonl").write_bytes(good_line(1))
    log = EventLog(tmp_path / "events.jsonl")
    assert log.read() == [event(0), event(1)]
    assert log.warnings == ["events.jsonl.2 line 2: not valid JSON"]


def test_blank_lines_and_unknown_keys_are_fine(tmp_path):
    path = tmp_path / "events.jsonl"
    record = {**event(0).__dict__, "colour": "red", "details": {"xid": 79}}
    path.write_bytes(b"\n" + json.dumps(record).encode() + b"\n  \n")
    log = EventLog(path)
    assert log.read() == [event(0)]
    assert log.warnings == []


def test_missing_source_defaults_to_ranktop(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(good_line().replace(b', "source": "ranktop"', b""))
    assert EventLog(path).read() == [event()]


def test_truncated_last_line_is_skipped_and_next_append_is_whole(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(good_line(0) + good_line(1)[:40])
    log = EventLog(path)
    assert log.read() == [event(0)]
    assert len(log.warnings) == 1
    assert log.warnings[0].startswith("events.jsonl line 2: truncated last line")
    log.append([event(2)])
    assert log.read() == [event(0), event(2)]


def test_reading_twice_does_not_repeat_warnings(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"{oops\n" + good_line())
    log = EventLog(path)
    log.read()
    log.read()
    assert log.warnings == ["events.jsonl line 1: not valid JSON"]


# Concurrency


def big_batch(writer: str, call: int, size: int = 10) -> list[Event]:
    # Chunks far larger than a stdio buffer, so a non-atomic write would tear lines.
    summary = f"{writer} call {call} " + "x" * 700
    return [event(call, rank=i, summary=summary, source=writer) for i in range(size)]


def test_threads_write_only_whole_lines(tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(path, max_bytes=10**9)

    def work(name: str) -> None:
        for call in range(25):
            log.append(big_batch(name, call))

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = assert_whole_lines(path)
    assert len(records) == 8 * 25 * 10
    assert len(log.read()) == 8 * 25 * 10
    assert log.warnings == []


def test_threads_rotating_together_lose_nothing(tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(path, max_bytes=20_000, keep=10_000)

    def work(name: str) -> None:
        for call in range(20):
            log.append(big_batch(name, call, size=5))

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (tmp_path / "events.jsonl.1").exists()
    assert len(log.read()) == 6 * 20 * 5
    assert log.warnings == []


WRITER = """
import os, sys, time
from pathlib import Path
from tests.tui.core.test_events import big_batch
from ranktop.tui.core.events import EventLog
name, folder = sys.argv[1], Path(sys.argv[2])
log = EventLog(folder / "events.jsonl", max_bytes=10**9)
(folder / f"ready-{name}").touch()
deadline = time.monotonic() + 30
while not (folder / "go").exists() and time.monotonic() < deadline:
    time.sleep(0.001)
for call in range(150):
    log.append(big_batch(name, call))
assert log.warnings == [], log.warnings
"""


def test_two_processes_write_only_whole_lines(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    names = ["p0", "p1"]
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, name, str(tmp_path)], cwd=ROOT, env=env)
        for name in names
    ]
    deadline = time.monotonic() + 30
    while not all((tmp_path / f"ready-{n}").exists() for n in names):
        assert time.monotonic() < deadline, "writers never started"
        time.sleep(0.01)
    (tmp_path / "go").touch()  # both start appending at once
    assert [proc.wait(timeout=60) for proc in procs] == [0, 0]
    records = assert_whole_lines(tmp_path / "events.jsonl")
    assert len(records) == 2 * 150 * 10
    assert {r["source"] for r in records} == set(names)


# Disks that refuse


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_read_only_folder_warns_instead_of_raising(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        for path in (folder / "events.jsonl", folder / "state" / "events.jsonl"):
            log = EventLog(path)
            log.append([event()])
            assert len(log.warnings) == 1 and "could not append" in log.warnings[0]
            assert log.read() == []
    finally:
        folder.chmod(0o700)


def test_path_under_a_regular_file_warns_instead_of_raising(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("not a folder")
    for path in (plain / "events.jsonl", plain / "ranktop" / "events.jsonl"):
        log = EventLog(path)
        log.append([event()])
        assert len(log.warnings) == 1 and "could not append" in log.warnings[0]
        assert log.read() == []
    assert plain.read_text() == "not a folder"


def test_full_disk_warns_instead_of_raising(tmp_path, monkeypatch):
    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    log = EventLog(tmp_path / "events.jsonl")
    log.append([event()])
    assert len(log.warnings) == 1
    assert "could not append" in log.warnings[0] and "space" in log.warnings[0]


# Location


def test_default_log_path_honours_xdg_state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert default_log_path() == tmp_path / "state" / "ranktop" / "events.jsonl"


@pytest.mark.parametrize("value", [None, "", "relative/state"])
def test_default_log_path_falls_back_to_local_state(tmp_path, monkeypatch, value):
    monkeypatch.setenv("HOME", str(tmp_path))
    if value is None:
        monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_STATE_HOME", value)
    assert default_log_path() == tmp_path / ".local" / "state" / "ranktop" / "events.jsonl"


def test_a_lock_held_elsewhere_delays_the_events_not_the_poll(tmp_path, monkeypatch):
    import fcntl

    from ranktop.tui.core import events as events_module
    monkeypatch.setattr(events_module, "LOCK_WAIT_SECONDS", 0.1)
    log = EventLog(tmp_path / "events.jsonl")
    log.append([event(1.0)])
    holder = os.open(tmp_path / "events.jsonl.lock", os.O_WRONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another process's hold (flock is per open file)
    try:
        log.append([event(2.0)])  # returns: the lines are kept, not written, not lost
        assert len(log.read()) == 1
        assert "locked by another process" in log.warnings[-1]
    finally:
        os.close(holder)
    log.append([event(3.0)])
    times = [e.time for e in log.read()]
    assert len(times) == 3 and times == sorted(times)
