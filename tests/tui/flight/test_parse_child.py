"""Hostile dumps: work a pickle makes the unpickler do with its lock held (exponential
hashing, nesting past any stack), and files that are no files, never freeze the console.
Each is parsed in a child process that is killed past its time; that rank says why."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from ranktop.tui.flight.reader import ReadBudget, read_dumps
from ranktop.tui.simulator.flight_writer import dump_document

from tests.tui.flight.test_reader import SEQ, write

QUICK = ReadBudget(parse_seconds=2.0)


def tuple_dag_key(depth: int = 40) -> bytes:
    """A dump whose dict key is a tuple of itself doubled ``depth`` times: a few hundred
    bytes, and hashing it takes 2**depth steps inside the unpickler."""
    body = b")q\x000"  # the empty tuple, kept as memo 0
    for level in range(1, depth + 1):
        below = bytes([level - 1])
        body += b"h" + below + b"h" + below + b"\x86q" + bytes([level]) + b"0"
    return (b"\x80\x02}X\x07\x00\x00\x00entries]s" + body + b"h" + bytes([depth])
            + b"Ns.")


def deep_file_name(depth: int = 100_000) -> bytes:
    """A dump whose one frame's file name is a list nested ``depth`` deep."""
    nested = b"]" * depth + b"a" * (depth - 1)
    frame = b"}X\x08\x00\x00\x00filename" + nested + b"s"
    entry = (b"}X\x06\x00\x00\x00frames]" + frame + b"as"
             b"X\x11\x00\x00\x00collective_seq_idK\x05s"
             b"X\x05\x00\x00\x00pg_idK\x00s"
             b"X\x0e\x00\x00\x00profiling_nameX\x0f\x00\x00\x00nccl:all_reduces")
    return b"\x80\x02}X\x07\x00\x00\x00entries]" + entry + b"as."


def test_a_pickle_that_hashes_forever_is_killed_and_the_rest_still_read(tmp_path) -> None:
    bomb = tuple_dag_key()
    assert len(bomb) < 800
    (tmp_path / "comm_lib_trace_rank_0").write_bytes(bomb)
    write(tmp_path, 1, dump_document(1, 3, SEQ))
    found = read_dumps(str(tmp_path), 3, QUICK)
    assert "parsing took more than 2 s" in found.errors[0]
    assert list(found.dumps) == [1] and found.dumps[1].frontier("0").enqueued == SEQ


def test_nesting_past_any_stack_never_escapes_the_reader(tmp_path) -> None:
    (tmp_path / "comm_lib_trace_rank_0").write_bytes(deep_file_name())
    found = read_dumps(str(tmp_path), 1, QUICK)
    assert found.errors == {} and [e.seq for e in found.dumps[0].entries] == [5]


def test_a_huge_list_dag_as_a_file_name_is_never_walked(tmp_path) -> None:
    doc = dump_document(0, 2, SEQ)
    shared: list = []
    for _ in range(40):  # printed, this would be 2**40 brackets long
        shared = [shared, shared]
    for entry in doc["entries"]:
        entry["frames"] = [{"filename": shared, "line": 1, "name": "step"}]
    write(tmp_path, 0, doc)
    found = read_dumps(str(tmp_path), 2, QUICK)
    assert found.errors == {} and found.dumps[0].entries


def test_a_fifo_where_a_dump_should_be_is_said_and_never_opened(tmp_path) -> None:
    os.mkfifo(tmp_path / "comm_lib_trace_rank_0")
    write(tmp_path, 1, dump_document(1, 2, SEQ))
    found = read_dumps(str(tmp_path), 2, QUICK)
    assert "not a regular file" in found.errors[0] and list(found.dumps) == [1]


def test_sigterm_ends_a_process_whose_reader_meets_the_hashing_bomb(tmp_path) -> None:
    process = console_in_the_bomb(tmp_path, "signal.signal(signal.SIGTERM, "
                                            "lambda *_: sys.exit(143))")
    try:
        assert process.stdout.readline() == "reading\n"
        # the reader in the bomb: its parser started (a signal while the reader's thread was
        # still starting would test the interpreter's shutdown, not ranktop)
        assert parser_started(process.pid), "the reader never started its parser"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 143  # a deadline, not a measure
    finally:
        process.kill()


def console_in_the_bomb(folder: Path, first: str = "") -> subprocess.Popen:
    """A process reading a dump folder holding the hashing bomb in a thread, as the console
    does, after running ``first``; it prints "reading" once the thread is started."""
    (folder / "comm_lib_trace_rank_0").write_bytes(tuple_dag_key())
    script = textwrap.dedent(f"""
        import signal, sys, threading
        from ranktop.tui.flight.reader import ReadBudget, read_dumps
        {first}
        threading.Thread(target=read_dumps, daemon=True,
                         args=({str(folder)!r}, 1, ReadBudget(parse_seconds=600))).start()
        print("reading", flush=True)
        threading.Event().wait()
    """)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)


def parser_started(pid: int, tries: int = 600) -> bool:
    """Whether process ``pid`` has a child process, looked for every 0.1 s (a deadline)."""
    tasks = Path(f"/proc/{pid}/task")
    for _ in range(tries):
        if any((task / "children").read_text().split() for task in tasks.iterdir()):
            return True
        time.sleep(0.1)
    return False


def children_of(pid: int) -> list[int]:
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]


def gone(pid: int, tries: int = 300) -> bool:
    """Whether process ``pid`` ended (or is a zombie), looked for every 0.1 s (a deadline)."""
    for _ in range(tries):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


def test_a_parser_busy_in_the_bomb_ends_when_the_console_is_killed(tmp_path) -> None:
    # SIGKILL leaves the console no time to kill its parser; the parser, held in the
    # unpickler with its lock, never reads its closed input: the kernel must end it.
    console = console_in_the_bomb(tmp_path)
    try:
        assert console.stdout.readline() == "reading\n"
        assert parser_started(console.pid), "the reader never started its parser"
        (parser,) = children_of(console.pid)
        time.sleep(0.5)  # in the bomb by now
        console.kill()
        console.wait(timeout=60)
        assert gone(parser), "the parser outlived the console"
    finally:
        console.kill()


def test_a_parser_whose_console_ended_before_it_started_ends_at_once(tmp_path) -> None:
    # the console gone before the child could ask the kernel to be told: it sees it is
    # orphaned (its parent is not the pid it was given) and ends
    child = subprocess.Popen([sys.executable, "-m", "ranktop.tui.flight.parse_child",
                              '{"parse_seconds": 1.0}', "1"], stdin=subprocess.PIPE)
    try:
        assert child.wait(timeout=60) == 1
    finally:
        child.kill()
