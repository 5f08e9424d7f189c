"""Run ``ranktop`` in a real pseudo-terminal, for the startup and idle-CPU benchmarks.

The child gets its own session with the pty as its controlling terminal (``pty.fork``), a
fixed window size, TERM=xterm-256color and an empty config directory, so a user's own
config file does not change the figures.
"""

from __future__ import annotations

import codecs
import compileall
import contextlib
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# CSI, OSC and two-character escape sequences: removed before looking for text on screen.
ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")


_compiled = False


def compile_sources() -> None:
    """Write ranktop's bytecode once, as an install does. Where PYTHONDONTWRITEBYTECODE is
    set (some shells and containers set it) no launch would write it, and every launch would
    compile the sources again: 0.2-0.3 s on a 2-core machine, counted as startup."""
    global _compiled
    if not _compiled:
        for folder in ("tui", "widgets", "config"):
            compileall.compile_dir(REPO / folder, quiet=1)
        _compiled = True


def find_ranktop() -> str:
    """The ``ranktop`` console script: the repo's venv first, then PATH."""
    local = REPO / ".venv" / "bin" / "ranktop"
    if local.exists():
        return str(local)
    found = shutil.which("ranktop")
    if found is None:
        sys.exit("bench: no ranktop console script (.venv/bin/ranktop or on PATH)")
    return found


class PtyApp:
    """One ``ranktop`` process on the slave side of a pty; the master end is ours."""

    def __init__(self, args: list[str], cols: int = 120, rows: int = 40,
                 env: dict[str, str] | None = None, program: list[str] | None = None) -> None:
        """``ranktop args`` (or ``program args``), with ``env`` over the fixed environment."""
        compile_sources()
        self._config = tempfile.TemporaryDirectory(prefix="ranktop-bench-")
        environ = {k: v for k, v in os.environ.items()
                   if not k.startswith(("RANKTOP_", "TEXTUAL_")) and k != "NO_COLOR"}
        environ.update(TERM="xterm-256color", COLUMNS=str(cols), LINES=str(rows),
                       XDG_CONFIG_HOME=self._config.name)
        environ.update(env or {})
        argv = [*(program or [find_ranktop()]), *args]
        self.started = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: size its terminal, then become ranktop
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
                os.execve(argv[0], argv, environ)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.exit_status: int | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._tail = ""
        self.transcript = bytearray()  # every byte the app wrote, in order

    def read(self, timeout: float) -> bytes:
        """Whatever the app wrote within ``timeout`` seconds (b"" if nothing; EOF too)."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return b""
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed its end
            return b""
        self.transcript += data
        return data

    def wait_for_text(self, text: str, timeout: float, raw: bool = False) -> float:
        """Read until ``text`` appears on screen (``raw``: in the bytes, escape sequences
        and all); seconds since launch when it did."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            data = self.read(0.05)
            if not data:
                if self.poll() is not None:
                    raise RuntimeError(f"ranktop exited early (status {self.exit_status})")
                continue
            # Keep a tail of the stream so text split across two reads is still found.
            self._tail = (self._tail + self._decoder.decode(data))[-8192:]
            if text in (self._tail if raw else ESCAPES.sub("", self._tail)):
                return time.perf_counter() - self.started
        raise TimeoutError(f"{text!r} did not appear within {timeout:g} s")

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def press(self, keys: str, text: str, timeout: float, raw: bool = False) -> float:
        """Send ``keys`` and wait for ``text`` to be drawn after them (what was on screen
        before does not count); seconds from the keys' bytes to the text's."""
        while self.read(0):  # what was drawn before the keys
            pass
        self._tail = ""
        sent = time.perf_counter()
        self.send(keys)
        return self.wait_for_text(text, timeout, raw) - (sent - self.started)

    def poll(self) -> int | None:
        """The exit status once the child has exited, else None."""
        if self.exit_status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.exit_status = os.waitstatus_to_exitcode(status)
        return self.exit_status

    def quit(self, timeout: float, keys: str = "\x03", drain: bool = True) -> float:
        """Send ``keys`` (ctrl+c: it quits from any screen; the demo's q leads to its jobs
        list) and wait for the exit; seconds it took. Kills the app on timeout."""
        sent = time.perf_counter()
        self.send(keys)
        self.wait_for_exit(timeout, drain)
        return time.perf_counter() - sent

    def wait_for_exit(self, timeout: float, drain: bool = True) -> int:
        """Wait for the child to exit, reading what it writes; its exit status. Kills it on
        timeout."""
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() > deadline:
                self.kill()
                raise TimeoutError(f"ranktop did not exit within {timeout:g} s")
            if drain:
                self.read(0.05)  # keep the pty from filling while the app restores the screen
            else:
                time.sleep(0.05)
        while drain and self.read(0.05):  # what it wrote last, still in the pty's buffer
            pass
        return self.exit_status

    def kill(self) -> None:
        """End the child's process group (only what this benchmark started)."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.poll() is not None:
                break
            try:
                os.killpg(self.pid, sig)
            except ProcessLookupError:
                break
            for _ in range(20):
                if self.poll() is not None:
                    break
                time.sleep(0.05)

    def close(self) -> None:
        self.kill()
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self._config.cleanup()

    def __enter__(self) -> PtyApp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
