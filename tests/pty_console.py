"""ranktop run in a real pseudo-terminal: the raw bytes it writes, keys sent to it, its exit.

Pilot shows what Textual meant to draw; only a pty shows the bytes that reach the terminal,
which is where an escape sequence smuggled in a label would do its harm.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Sequence

LEAVE_ALTERNATE_SCREEN = b"\x1b[?1049l"
# How long a wait for the screen or the exit gives up after: a wait ends as soon as what it
# waits for is there, so only a loaded machine (a load of 10 on 2 cores, where the console
# takes tens of seconds to start) comes near it.
PATIENCE_SECONDS = 120.0
_ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


class PtyConsole:
    """A command on a pty of ``size`` (columns, rows); ``output`` holds every byte it wrote."""

    def __init__(self, args: Sequence[str], size: tuple[int, int] = (120, 40),
                 env: dict[str, str] | None = None) -> None:
        controller, terminal = pty.openpty()
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        environment = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(size[0]),
                       "LINES": str(size[1]), **(env or {})}
        environment.pop("TEXTUAL", None)
        # Textual draws on stderr: all three streams are the terminal, as in a shell.
        self.process = subprocess.Popen(list(args), stdin=terminal, stdout=terminal,
                                        stderr=terminal, env=environment,
                                        start_new_session=True)
        os.close(terminal)
        self.fd = controller
        self.output = bytearray()

    @classmethod
    def ranktop(cls, *args: str, **kwargs) -> PtyConsole:
        return cls([sys.executable, "-m", "ranktop", *args], **kwargs)

    def read(self, seconds: float) -> None:
        """Collect what the program writes for ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.1))
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:  # the program has gone and closed its side
                    return
                if not chunk:
                    return
                self.output += chunk

    def text(self) -> str:
        """What was written, with the terminal's own control sequences taken out."""
        return self.strip(bytes(self.output).decode("utf-8", "replace"))

    @staticmethod
    def strip(raw: str) -> str:
        """``raw`` output without the CSI sequences that colour and place it."""
        return _ANSI.sub(b"", raw.encode("utf-8", "surrogatepass")).decode("utf-8", "replace")

    def wait_for(self, text: str, timeout: float = PATIENCE_SECONDS) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.read(0.2)
            if text in self.text():
                return True
            if self.process.poll() is not None:
                self.read(0.2)
                return text in self.text()
        return False

    def send(self, keys: str | bytes, pause: float = 0.3) -> None:
        os.write(self.fd, keys.encode() if isinstance(keys, str) else keys)
        self.read(pause)

    def finish(self, timeout: float = PATIENCE_SECONDS) -> tuple[int, bytes]:
        """The exit status, and the bytes written after the console left the alternate
        screen (what the shell shows), once the program has ended (killed past ``timeout``)."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            self.read(0.1)
        if self.process.poll() is None:
            self.process.kill()
        self.read(0.3)
        self.process.wait(timeout=10)
        os.close(self.fd)
        raw = bytes(self.output)
        left = raw.rfind(LEAVE_ALTERNATE_SCREEN)
        after = raw[left + len(LEAVE_ALTERNATE_SCREEN):] if left >= 0 else raw
        return self.process.returncode, after

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
