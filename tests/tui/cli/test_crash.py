"""A crash is never a quit: one line naming the error, a non-zero exit, the terminal given
back, and the traceback (without local variables) kept in a file."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

from ranktop.tui.cli import crash
from ranktop.tui.cli.main import main

from tests.pty_console import _ANSI, LEAVE_ALTERNATE_SCREEN, PtyConsole

# The demo console with its pause key broken, run in a real terminal.
BROKEN_PAUSE = """
import sys
from ranktop.tui.screens.cluster import ClusterScreen
def broken(self):
    raise ZeroDivisionError("pause broke \\x1b]52;c;b3duZWQ=\\x07")
ClusterScreen.action_pause = broken
from ranktop.tui.cli.main import main
sys.exit(main(["--demo", "--nodes", "2"]))
"""


def test_a_crash_in_the_console_exits_70_with_one_line_and_restores_the_terminal(tmp_path):
    console = PtyConsole([sys.executable, "-c", BROKEN_PAUSE],
                         env={"XDG_STATE_HOME": str(tmp_path), "BEARER": "tok-secret"})
    try:
        assert console.wait_for("ranks 16/16 up")
        console.send("p")
        status, after = console.finish()
    finally:
        console.close()
    assert status == crash.CRASH_EXIT
    shown = _ANSI.sub(b"", after).decode()  # what the shell shows once the console is gone
    lines = shown.strip().splitlines()
    assert len(lines) == 1, shown
    assert lines[0].startswith("ranktop: internal error: ZeroDivisionError: pause broke")
    assert b"\x1b]52" not in after and "Traceback" not in shown
    assert LEAVE_ALTERNATE_SCREEN in console.output  # the terminal was given back
    [kept] = list((tmp_path / "ranktop").glob("crash-*.txt"))
    assert "ZeroDivisionError" in kept.read_text() and "in broken" in kept.read_text()


def test_a_failure_outside_the_console_is_one_line_and_exit_70(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))

    def broken(*_args):
        raise RuntimeError("no")

    monkeypatch.setattr("ranktop.tui.cli.main._report", broken)
    assert main(["report"]) == crash.CRASH_EXIT
    assert capsys.readouterr().err.startswith("ranktop: internal error: RuntimeError: no; details")
    [kept] = list((tmp_path / "ranktop").glob("crash-*.txt"))
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600  # the user's alone, as the event log
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700


def test_a_quit_exits_0(tmp_path):
    console = PtyConsole.ranktop("--demo", "--nodes", "2", env={"XDG_STATE_HOME": str(tmp_path)})
    try:
        assert console.wait_for("ranks 16/16 up")
        console.send("q")  # the demo's job was opened over its fleet's jobs list
        assert console.wait_for("5 jobs, ")
        console.send("q")
        status, after = console.finish()
    finally:
        console.close()
    assert status == 0 and _ANSI.sub(b"", after).strip() == b""


def test_a_reader_that_stopped_reading_is_no_crash(tmp_path):
    """`ranktop rules --job x | head -0`: the pipe's reader has gone before the first line;
    ranktop ends as a process ended by SIGPIPE does, says nothing and keeps no crash file."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written
    try:
        done = subprocess.run([sys.executable, "-m", "ranktop", "rules", "--job", "x"],
                              stdout=write_end, stderr=subprocess.PIPE, timeout=60,
                              env={**os.environ, "XDG_STATE_HOME": str(tmp_path)})
    finally:
        os.close(write_end)
    assert done.returncode == crash.READER_GONE_EXIT
    assert done.stderr == b""
    assert not list(tmp_path.rglob("crash-*.txt"))
