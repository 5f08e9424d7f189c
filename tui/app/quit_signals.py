"""The signals that end ranktop from outside, and whether its terminal is still there.

`kill` (SIGTERM), a closed SSH connection or tmux pane (SIGHUP) and an interrupt sent from
outside (SIGINT): each quits as `q` does, so the terminal is given back as it was found and
what ranktop made (the demo's temporary folders) is removed. No Textual here: `ranktop
report` uses these too.
"""

from __future__ import annotations

import select
import signal
import sys

QUIT_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT")
                     if hasattr(signal, name))


def exit_status(signum: int) -> int:
    """The exit status a shell gives a process a signal ended: 128 + its number."""
    return 128 + signum


def terminal_gone() -> bool:
    """Whether the terminal has hung up (the SSH connection or the tmux pane is gone): it
    takes no more writes, so nothing should wait to write to it."""
    try:
        probe = select.poll()
        probe.register(sys.__stderr__.fileno(), select.POLLOUT)  # where Textual draws
        return any(events & (select.POLLHUP | select.POLLERR) for _, events in probe.poll(0))
    except (OSError, ValueError, AttributeError):
        return False
