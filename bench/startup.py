"""Time from launching ``ranktop --demo`` to its first full frame, in a real 120x40 pty.

The first full frame is the moment the terminal has received the header line that is
drawn after the first poll ("ranks 512/512 up"). Each run then quits with "q".

    .venv/bin/python bench/startup.py [--runs 5] [--timeout 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys

from ptyrun import PtyApp, find_ranktop

FIRST_FRAME = "ranks 512/512 up"


def one_run(timeout: float) -> tuple[float, float]:
    """Seconds to the first full frame and seconds from "q" to exit."""
    with PtyApp(["--demo"], cols=120, rows=40) as app:
        try:
            first = app.wait_for_text(FIRST_FRAME, timeout)
            exit_seconds = app.quit(timeout)
        except BaseException:
            app.kill()
            raise
    if app.exit_status != 0:
        raise RuntimeError(f"ranktop exited with status {app.exit_status}")
    return first, exit_seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds allowed for each of the first frame and the exit")
    args = parser.parse_args()

    print(f"ranktop: {find_ranktop()}")
    print(f"launch -> first full frame ({FIRST_FRAME!r}), 120x40 pty, TERM=xterm-256color")
    firsts, exits = [], []
    for run in range(1, args.runs + 1):
        try:
            first, exit_seconds = one_run(args.timeout)
        except (RuntimeError, TimeoutError) as error:
            print(f"run {run}: FAILED: {error}", file=sys.stderr)
            return 1
        firsts.append(first * 1000)
        exits.append(exit_seconds * 1000)
        print(f"run {run}: first frame {first * 1000:7.0f} ms   quit {exit_seconds * 1000:5.0f} ms")
    print(f"median: first frame {statistics.median(firsts):7.0f} ms   "
          f"quit {statistics.median(exits):5.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
