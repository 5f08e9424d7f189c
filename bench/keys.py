"""Keypress to screen: how long from a key's bytes reaching ``ranktop --demo`` in a real
120x40 pty to the changed frame reaching the terminal, for the main keys.

Each key waits for a text that only its own frame draws ("Show every key" after ?, the
rank screen's "job median" after Enter...). The demo begins 60 s into its scenario, so
there are anomalies for n to visit. Each round is a fresh app (the same state for every
key); five rounds (--rounds), then the median and the worst of each key. The load average
is printed, as the figures depend on what else runs.

    .venv/bin/python bench/keys.py [--rounds 5] [--escdelay MS]
    .venv/bin/python bench/keys.py --polling 2048 --rounds 2   # 16,384 ranks, polling
    .venv/bin/python bench/keys.py --polling 2048 --engine process  # its engine apart

With --polling, the same keys are then timed against ``minimal_app.py`` (a Textual app that
does nothing else) in the same run: the floor Textual and the pty set on this machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from ptyrun import PtyApp

FIRST_FRAME = "ranks 512/512 up"
# (name, bytes, a text only the frame that key changes draws: the status line's rank
# "rank 8 gpu-node-001 GPU 0  SM" is not the anomaly list's "rank 37 ... GPU 5  thermal")
ROUND = [
    ("?", "?", "Show every key"),
    ("? (close help)", "?", "N to visit"),  # the anomaly panel's title, under the help
    ("right", "\x1b[C", "gpu-node-001 GPU 0  SM"),
    ("n", "n", "gpu-node-004 GPU 5  SM"),
    ("Enter", "\r", "job median"),
    ("]", "]", "rank 38 "),
    ("Esc", "\x1b", "N to visit"),
    ("2", "2", "2 GPU temperature"),
    ("0", "0", "1 SM activity"),
    ("c", "c", "Compute time"),
    ("c (back)", "c", "Step time"),
    ("/", "/", "Search the ranks"),
    ("/ 255 Enter", "255\r", "gpu-node-031 GPU 7  SM"),
    ("p", "p", "PAUSED"),
]
UNPAUSE = "p"
RESTORED = "\x1b[?1049l"  # leaving the alternate screen: the shell's screen is back
JOBS_LIST = "5 jobs, "  # the header of the demo's fleet on the jobs list


def one_round(app: PtyApp, timeout: float, gap: float) -> dict[str, float]:
    """Each key's time, pressed ``gap`` seconds after the last one's frame, as a person
    would; then the quit: to the terminal given back, and to the process gone."""
    times = {}
    for name, keys, text in ROUND:
        time.sleep(gap)
        times[name] = app.press(keys, text, timeout)
    app.send(UNPAUSE)
    time.sleep(gap)
    # the demo's job was opened over its fleet's jobs list: q leads there, and q there quits
    times["q: the jobs list"] = app.press("q", JOBS_LIST, timeout)
    time.sleep(gap)
    times["q: terminal back"] = app.press("q", RESTORED, timeout, raw=True)
    sent = time.perf_counter() - times["q: terminal back"]
    app.wait_for_exit(timeout)
    times["q: process gone"] = time.perf_counter() - sent
    return times


def jump_latencies(app: PtyApp, presses: int, n_ranks: int, timeout: float,
                   gap: float) -> list[float]:
    """Keypress to frame, ``presses`` times, at whatever point of the poll cycle each key
    lands (polls keep running): "/" until the jump box is drawn, then Enter on a rank number
    until the status line shows that rank. Seconds, both kinds together."""
    times = []
    for i in range(presses):
        rank = (1009 + 7919 * i) % n_ranks  # spread over the job, clear of the demo's faults
        time.sleep(gap)
        times.append(app.press("/", "Search the ranks", timeout))
        app.send(str(rank))
        time.sleep(0.1)  # the digits echo in the box; not what is timed
        times.append(app.press("\r", f"rank {rank} gpu-node-", timeout))
    return times


def measure_while_polling(nodes: int, presses: int = 10, timeout: float = 120.0,
                          gap: float = 0.37, engine: str = "thread") -> dict:
    """Keypress to frame at ``nodes`` x 8 ranks with the demo polling every 2 s: median,
    p90 and worst in milliseconds. ``gap`` is not a divisor of the refresh, so the keys
    land all over the poll cycle, many while a poll is in flight. ``engine``: "process" to
    poll and analyse in a process of the engine's own."""
    ranks = nodes * 8
    with PtyApp(["--demo", "--nodes", str(nodes)], cols=120, rows=40,
                env={"RANKTOP_ENGINE": engine}) as app:
        first = app.wait_for_text(f"ranks {ranks}/{ranks} up", timeout)
        times = [t * 1000 for t in jump_latencies(app, presses, ranks, timeout, gap)]
        # A big demo quits once its log files are written and removed: minutes at 100,000.
        app.quit(timeout + ranks / 100)
    ordered = sorted(times)
    return {"ranks": ranks, "first_ms": first * 1000, "median_ms": statistics.median(times),
            "p90_ms": ordered[int(0.9 * (len(ordered) - 1))], "max_ms": ordered[-1],
            "samples": len(times)}


def measure_minimal(presses: int = 10, timeout: float = 30.0, gap: float = 0.37) -> dict:
    """The same jump keys against ``minimal_app.py``, a Textual app that does nothing else:
    what Textual and the pty cost on this machine now, beside ranktop's figure."""
    program = [sys.executable, str(Path(__file__).with_name("minimal_app.py"))]
    with PtyApp([], cols=120, rows=40, program=program) as app:
        first = app.wait_for_text("ranks 0/0 up", timeout)
        times = [t * 1000 for t in jump_latencies(app, presses, 16384, timeout, gap)]
        app.quit(timeout, keys="q")
    ordered = sorted(times)
    return {"first_ms": first * 1000, "median_ms": statistics.median(times),
            "p90_ms": ordered[int(0.9 * (len(ordered) - 1))], "max_ms": ordered[-1],
            "samples": len(times)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--gap", type=float, default=0.3,
                        help="seconds between one key's frame and the next key")
    parser.add_argument("--escdelay", type=int, default=None,
                        help="ESCDELAY for the app, in ms (how long a lone Esc is waited on)")
    parser.add_argument("--polling", type=int, metavar="NODES", default=None,
                        help="instead: jump keys at NODES x 8 ranks while the demo polls")
    parser.add_argument("--engine", choices=("thread", "process"), default="thread",
                        help="with --polling: where the demo's engine runs")
    args = parser.parse_args()
    if args.polling:
        r = measure_while_polling(args.polling, presses=10 * args.rounds, timeout=args.timeout,
                                  engine=args.engine)
        print(f"{r['ranks']} ranks, engine in a {args.engine}, polling: keypress to frame "
              f"median {r['median_ms']:.0f} ms, "
              f"p90 {r['p90_ms']:.0f} ms, worst {r['max_ms']:.0f} ms ({r['samples']} keys)")
        m = measure_minimal(presses=10 * args.rounds, timeout=args.timeout)
        print(f"a minimal Textual app, the same keys: median {m['median_ms']:.0f} ms, "
              f"p90 {m['p90_ms']:.0f} ms, worst {m['max_ms']:.0f} ms ({m['samples']} keys); "
              f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return 0
    env = {} if args.escdelay is None else {"ESCDELAY": str(args.escdelay)}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
    times: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        with PtyApp(["--demo", "--demo-start", "60"], cols=120, rows=40, env=env) as app:
            app.wait_for_text(FIRST_FRAME, args.timeout)
            app.wait_for_text("anomalies (", args.timeout)
            for name, seconds in one_round(app, args.timeout, args.gap).items():
                times.setdefault(name, []).append(seconds * 1000)
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'key':<18} {'median':>8} {'worst':>8}   (ms, {args.rounds} rounds, 120x40 pty)")
    for name, values in times.items():
        print(f"{name:<18} {statistics.median(values):8.0f} {max(values):8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
