"""Time from launching ``ranktop --demo`` to its first full frame, in a real 120x40 pty.

The first full frame is the moment the terminal has received the header line that is
drawn after the first poll ("ranks 512/512 up"). Each run then quits with ctrl+c (the
demo's q leads to its jobs list, where q quits).

With ``--late SECONDS`` the demo starts that far into its job (``--demo-start``): a late
start, which reads the job's past; the time to its verdicts (the header's first "critical")
is measured beside the time to the first frame.

    .venv/bin/python bench/startup.py [--runs 5] [--nodes 64] [--timeout 30] [--late 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys

from ptyrun import PtyApp, find_ranktop


def first_frame_text(nodes: int, gpus: int = 8, late: bool = False) -> str:
    """The header text drawn once the first poll is on screen (a late start's job may have
    lost a rank by then: only the size is known)."""
    return f"/{nodes * gpus} up" if late else f"ranks {nodes * gpus}/{nodes * gpus} up"


VERDICT_TEXT = "critical"  # the header's count of critical incidents


def one_run(timeout: float, nodes: int = 64,
            late: float | None = None) -> tuple[float, float, float | None]:
    """Seconds to the first full frame, to the first verdict of a late start (None for a
    start at the job's beginning), and from ctrl+c to exit."""
    command = ["--demo", "--nodes", str(nodes)]
    if late is not None:
        command += ["--demo-start", str(late)]
    verdict = None
    with PtyApp(command, cols=120, rows=40) as app:
        try:
            first = app.wait_for_text(first_frame_text(nodes, late=late is not None), timeout)
            if late is not None:
                verdict = app.wait_for_text(VERDICT_TEXT, timeout)
            exit_seconds = app.quit(timeout)
        except BaseException:
            app.kill()
            raise
    if app.exit_status != 0:
        raise RuntimeError(f"ranktop exited with status {app.exit_status}")
    return first, verdict, exit_seconds


def measure(runs: int, nodes: int = 64, timeout: float = 30.0, echo: bool = False,
            late: float | None = None) -> dict:
    """Median milliseconds to the first frame, to a late start's verdicts, and to exit
    after ctrl+c, over ``runs``."""
    firsts, verdicts, exits = [], [], []
    for run in range(1, runs + 1):
        first, verdict, exit_seconds = one_run(timeout, nodes, late)
        firsts.append(first * 1000)
        if verdict is not None:
            verdicts.append(verdict * 1000)
        exits.append(exit_seconds * 1000)
        if echo:
            judged = "" if verdict is None else f"   verdicts {verdict * 1000:7.0f} ms"
            print(f"run {run}: first frame {first * 1000:7.0f} ms{judged}   "
                  f"quit {exit_seconds * 1000:5.0f} ms")
    return {"ranks": nodes * 8, "first_ms": statistics.median(firsts),
            "verdict_ms": statistics.median(verdicts) if verdicts else None,
            "quit_ms": statistics.median(exits), "runs": runs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=64, help="8 GPUs each (default 64)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds allowed for each of the first frame and the exit")
    parser.add_argument("--late", type=float, default=None, metavar="SECONDS",
                        help="start this far into the demo's job (a late start)")
    args = parser.parse_args()

    print(f"ranktop: {find_ranktop()}")
    print(f"launch -> first full frame ({first_frame_text(args.nodes)!r}), 120x40 pty, "
          "TERM=xterm-256color")
    try:
        result = measure(args.runs, args.nodes, args.timeout, echo=True, late=args.late)
    except (RuntimeError, TimeoutError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    judged = "" if result["verdict_ms"] is None else f"   verdicts {result['verdict_ms']:7.0f} ms"
    print(f"median: first frame {result['first_ms']:7.0f} ms{judged}   "
          f"quit {result['quit_ms']:5.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
