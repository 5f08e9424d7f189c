"""Asking ranks for a dump through their debug pipes: one byte into each FIFO, nothing into
anything else, and a rank that does not listen reported rather than waited on."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ranktop.tui.flight.pipes import describe, find_pipes, pipes_pattern, request_dumps


def listen(path: Path, got: list[bytes]) -> threading.Thread:
    """A rank listening on its pipe, as PyTorch's does: it reads what is written."""
    os.mkfifo(path)
    ready = threading.Event()

    def run() -> None:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        ready.set()
        try:
            for _ in range(200):
                try:
                    data = os.read(fd, 16)
                except BlockingIOError:
                    data = b""
                if data:
                    got.append(data)
                    return
                threading.Event().wait(0.01)
        finally:
            os.close(fd)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(5)
    return thread


def test_each_listening_rank_gets_one_byte(tmp_path: Path) -> None:
    got: list[bytes] = []
    threads = [listen(tmp_path / f"trace_{r}.pipe", got) for r in range(3)]
    pipes = find_pipes(str(tmp_path / "trace_"), 3)
    assert sorted(pipes) == [0, 1, 2]
    asked = request_dumps(pipes)
    for thread in threads:
        thread.join(5)
    assert asked.asked == [0, 1, 2] and not asked.failed
    assert got == [b"1", b"1", b"1"]
    assert asked.summary() == "asked 3 ranks for a Flight Recorder dump"


def test_a_rank_not_listening_and_a_regular_file_are_reported_not_written(
        tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "trace_0.pipe")  # nobody reads it: a dead rank
    regular = tmp_path / "trace_1.pipe"
    regular.write_text("keep me")
    os.utime(regular, (1000, 1000))
    asked = request_dumps(find_pipes(str(tmp_path / "trace_{rank}.pipe"), 2))
    assert asked.asked == []
    assert asked.failed == {0: "no reader: the rank is not listening",
                            1: "not a named pipe: nothing written"}
    assert regular.read_text() == "keep me" and regular.stat().st_mtime == 1000
    assert "not asked: rank 0 (no reader" in asked.summary()


def test_the_confirmation_says_what_is_written_where(tmp_path: Path) -> None:
    pipes = {r: tmp_path / f"trace_{r}.pipe" for r in range(6)}
    for path in pipes.values():
        os.mkfifo(path)
    text = describe(pipes, 8)
    assert "one byte ('1') into each of 6 named pipes (FIFOs), and nothing else anywhere" \
        in text
    assert str(pipes[0]) in text and str(pipes[5]) in text and "(2 more)" in text
    assert "2 of 8 ranks have no pipe" in text
    assert describe({}, 8).startswith("No rank's named pipe (FIFO) was found: nothing would")


def test_the_confirmation_counts_only_what_will_be_written(tmp_path: Path) -> None:
    pipes = {r: tmp_path / f"trace_{r}.pipe" for r in range(8)}
    for rank, path in pipes.items():
        os.mkfifo(path) if rank % 2 == 0 else path.write_text("a file, not a pipe")
    text = describe(pipes, 8)
    assert "into each of 4 named pipes (FIFOs)" in text
    assert "4 of the paths found are not named pipes and will not be written to" in text
    only_files = describe({1: pipes[1], 3: pipes[3]}, 8)
    assert only_files.startswith("No rank's named pipe (FIFO) was found")


def test_escape_sequences_in_a_folder_name_never_reach_the_confirmation(tmp_path) -> None:
    folder = tmp_path / "runs\x1b[2J\x1b]0;owned\x07"
    folder.mkdir()
    pipes = {r: folder / f"trace_{r}.pipe" for r in range(2)}
    for path in pipes.values():
        os.mkfifo(path)
    text = describe(pipes, 2)
    assert "\x1b" not in text and "\x07" not in text and "runs" in text


def test_a_prefix_means_pytorchs_pipe_names() -> None:
    assert pipes_pattern("/fr/trace_") == "/fr/trace_{rank}.pipe"
    assert pipes_pattern("/fr/p{rank}") == "/fr/p{rank}"
