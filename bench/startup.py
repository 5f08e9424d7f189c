"""Time from launching ``ranktop --demo`` to its first full frame, in a real 120x40 pty.

The first full frame is the moment the terminal has received the header line that is
drawn after the first poll ("ranks 512/512 up"). Each run then quits with "q".

    .venv/bin/python bench/startup.py [--runs 5] [--nodes 64] [--timeout 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys

from ptyrun import PtyApp, find_ranktop


def first_frame_text(nodes: int, gpus: int = 8) -> str:
    """The header text drawn once the first poll is on screen."""
    return f"ranks {nodes * gpus}/{nodes * gpus} up"


def one_run(timeout: float, nodes: int = 64) -> tuple[float, float]:
    """Seconds to the first full frame and seconds from "q" to exit."""
    with PtyApp(["--demo", "--nodes", str(nodes)], cols=120, rows=40) as app:
        try:
            first = app.wait_for_text(first_frame_text(nodes), timeout)
            exit_seconds = app.quit(timeout)
        except BaseException:
            app.kill()
            raise
    if app.exit_status != 0:
        raise RuntimeError(f"ranktop exited with status {app.exit_status}")
    return first, exit_seconds


def measure(runs: int, nodes: int = 64, timeout: float = 30.0, echo: bool = False) -> dict:
    """Median milliseconds to the first frame and to exit after "q", over ``runs``."""
    firsts, exits = [], []
    for run in range(1, runs + 1):
        first, exit_seconds = one_run(timeout, nodes)
        firsts.append(first * 1000)
        exits.append(exit_seconds * 1000)
        if echo:
            print(f"run {run}: first frame {first * 1000:7.0f} ms   "
                  f"quit {exit_seconds * 1000:5.0f} ms")
    return {"ranks": nodes * 8, "first_ms": statistics.median(firsts),
            "quit_ms": statistics.median(exits), "runs": runs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=64, help="8 GPUs each (default 64)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds allowed for each of the first frame and the exit")
    args = parser.parse_args()

    print(f"ranktop: {find_ranktop()}")
    print(f"launch -> first full frame ({first_frame_text(args.nodes)!r}), 120x40 pty, "
          "TERM=xterm-256color")
    try:
        result = measure(args.runs, args.nodes, args.timeout, echo=True)
    except (RuntimeError, TimeoutError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print(f"median: first frame {result['first_ms']:7.0f} ms   quit {result['quit_ms']:5.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
