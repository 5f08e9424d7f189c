"""A real `ranktop --demo` in a real pseudo-terminal, ended by a signal as `kill`, a closed
SSH session or `tmux kill-session` end it: the terminal must be given back as it was found
and the demo's temporary folders removed."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from bench.ptyrun import PtyApp

FIRST_FRAME = "ranks 64/64 up"
# What Textual turns on, and the sequence that turns each off again.
RESTORED = {
    "the alternate screen left": b"\x1b[?1049l",
    "the cursor shown": b"\x1b[?25h",
    "mouse tracking off": b"\x1b[?1000l",
    "line wrapping on": b"\x1b[?7h",
    "bracketed paste off": b"\x1b[?2004l",
}


def demo(tmp_path) -> PtyApp:
    """The demo, small, with its temporary folders made under ``tmp_path / "tmp"``."""
    (tmp_path / "tmp").mkdir()
    return PtyApp(["--demo", "--nodes", "8"], cols=100, rows=30,
                  env={"TMPDIR": str(tmp_path / "tmp")},
                  program=[sys.executable, "-m", "ranktop.tui"])


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT],
                         ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_restores_the_terminal_and_removes_the_demo_folders(tmp_path, signum):
    with demo(tmp_path) as app:
        app.wait_for_text(FIRST_FRAME, timeout=60)
        assert list((tmp_path / "tmp").iterdir()), "the demo made no temporary folder"
        before = len(app.transcript)
        os.kill(app.pid, signum)
        status = app.wait_for_exit(timeout=30)
        at_exit = bytes(app.transcript[before:])
    missing = [what for what, sequence in RESTORED.items() if sequence not in at_exit]
    assert not missing, f"not restored: {missing}"
    assert b"Traceback" not in at_exit
    assert status == 128 + signum
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_closed_terminal_still_removes_the_demo_folders(tmp_path):
    """The SSH connection drops: the pty's other end closes and the kernel sends SIGHUP."""
    with demo(tmp_path) as app:
        app.wait_for_text(FIRST_FRAME, timeout=60)
        os.close(app.fd)
        app.fd = os.open(os.devnull, os.O_RDONLY)  # so that close() has something to close
        app.wait_for_exit(timeout=30, drain=False)
    assert list((tmp_path / "tmp").iterdir()) == []
