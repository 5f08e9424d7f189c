"""CPU and terminal bytes of an idle ``ranktop --demo`` (nobody pressing keys), 120x40 pty.

After the first frame and a warm-up, the process's utime+stime (from /proc/<pid>/stat,
which covers every thread) are read at the start and the end of the measurement window.
A thread keeps draining the pty the whole time, so the app never blocks on a full terminal.

    .venv/bin/python bench/idle_cpu.py [--seconds 60] [--warmup 5] [--refresh 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

from ptyrun import PtyApp

TICK = os.sysconf("SC_CLK_TCK")
GOAL_PERCENT = 3.0


class Drain(threading.Thread):
    """Reads the pty until told to stop; counts the bytes."""

    def __init__(self, app: PtyApp) -> None:
        super().__init__(daemon=True)
        self.app = app
        self.bytes = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            self.bytes += len(self.app.read(0.1))


def cpu_seconds(stat_path: Path) -> float:
    """utime + stime of a /proc stat file, in seconds."""
    text = stat_path.read_text()
    fields = text[text.rindex(")") + 2:].split()  # the name may hold spaces
    return (int(fields[11]) + int(fields[12])) / TICK


def thread_times(pid: int) -> dict[str, float]:
    """CPU seconds of each live thread, by "tid name"."""
    times = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = "main" if task.name == str(pid) else (task / "comm").read_text().strip()
            times[f"{task.name} {name}"] = cpu_seconds(task / "stat")
        except OSError:  # the thread ended meanwhile
            continue
    return times


def measure(args: argparse.Namespace) -> int:
    extra = ["--refresh", str(args.refresh)] if args.refresh else []
    with PtyApp(["--demo", *extra], cols=120, rows=40) as app:
        try:
            first = app.wait_for_text("ranks 512/512 up", args.timeout)
        except (RuntimeError, TimeoutError) as error:
            print(f"FAILED: {error}", file=sys.stderr)
            return 1
        print(f"first frame after {first * 1000:.0f} ms; warming up {args.warmup:g} s")
        drain = Drain(app)
        drain.start()
        time.sleep(args.warmup)
        stat = Path(f"/proc/{app.pid}/stat")
        threads_before = thread_times(app.pid)
        cpu_before, bytes_before, wall_before = cpu_seconds(stat), drain.bytes, time.monotonic()
        time.sleep(args.seconds)
        cpu_after, bytes_after, wall_after = cpu_seconds(stat), drain.bytes, time.monotonic()
        threads_after = thread_times(app.pid)
        drain.stopping.set()
        drain.join(timeout=5)
        try:
            app.quit(args.timeout)
        except TimeoutError as error:
            print(f"warning: {error}", file=sys.stderr)

    wall = wall_after - wall_before
    percent = 100 * (cpu_after - cpu_before) / wall
    print(f"window: {wall:.1f} s at refresh {args.refresh or 'default (2)'} s")
    print(f"cpu: {cpu_after - cpu_before:.2f} s = {percent:.2f} % of one core "
          f"(goal <= {GOAL_PERCENT:g} %: {'met' if percent <= GOAL_PERCENT else 'NOT met'})")
    print(f"terminal output: {(bytes_after - bytes_before) / wall:,.0f} bytes/s")
    print("by thread (cpu s in the window):")
    for key, after in sorted(threads_after.items()):
        used = after - threads_before.get(key, 0.0)
        print(f"  {key:<28} {used:6.2f} s")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measurement window")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds after the first frame")
    parser.add_argument("--refresh", type=float, default=None,
                        help="pass --refresh to ranktop (default: its own, 2 s)")
    parser.add_argument("--timeout", type=float, default=30.0)
    return measure(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
