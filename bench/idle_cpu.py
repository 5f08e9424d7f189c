"""CPU and terminal bytes of an idle ``ranktop`` (nobody pressing keys), 120x40 pty: the demo,
or (--prometheus) the console polling a real Prometheus that scrapes ``ranktop simulate``.

After the first frame and a warm-up, the process's utime+stime (from /proc/<pid>/stat,
which covers every thread) are read at the start and the end of the measurement window.
A thread keeps draining the pty the whole time, so the app never blocks on a full terminal.
Against Prometheus, the CPU of Prometheus and of the simulator in the same window is given
too: that is the server side, not ranktop's.

    .venv/bin/python bench/idle_cpu.py [--seconds 60] [--warmup 5] [--refresh 2] [--nodes 64]
    .venv/bin/python bench/idle_cpu.py --prometheus [--scrape 2s]   # needs Debian's prometheus
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from ptyrun import REPO, PtyApp

TICK = os.sysconf("SC_CLK_TCK")
GOAL_PERCENT = 3.0
SCENARIO = REPO / "config" / "scenario.toml"


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


def measure(args: list[str], first_text: str, seconds: float = 60.0, warmup: float = 5.0,
            timeout: float = 60.0, others: dict[str, int] | None = None) -> dict:
    """Idle CPU of ``ranktop args`` once ``first_text`` is on screen, as a percentage of one
    core over ``seconds``; also of each of ``others`` (name: pid) in the same window."""
    others = others or {}
    with PtyApp(args, cols=120, rows=40) as app:
        first = app.wait_for_text(first_text, timeout)
        drain = Drain(app)
        drain.start()
        time.sleep(warmup)
        pids = {"ranktop": app.pid, **others}
        stats = {name: Path(f"/proc/{pid}/stat") for name, pid in pids.items()}
        threads_before = thread_times(app.pid)
        before = {name: cpu_seconds(path) for name, path in stats.items()}
        bytes_before, wall_before = drain.bytes, time.monotonic()
        time.sleep(seconds)
        after = {name: cpu_seconds(path) for name, path in stats.items()}
        bytes_after, wall = drain.bytes, time.monotonic() - wall_before
        threads_after = thread_times(app.pid)
        drain.stopping.set()
        drain.join(timeout=5)
        with contextlib.suppress(TimeoutError):
            app.quit(timeout)
    percent = {name: 100 * (after[name] - before[name]) / wall for name in pids}
    threads = {key: used - threads_before.get(key, 0.0) for key, used in threads_after.items()}
    return {"first_ms": first * 1000, "window_s": wall, "percent": percent["ranktop"],
            "others": {n: p for n, p in percent.items() if n != "ranktop"},
            "bytes_per_s": (bytes_after - bytes_before) / wall, "threads": threads}


@contextlib.contextmanager
def prometheus_cluster(nodes: int, scrape: str = "2s") -> Iterator[tuple[str, dict[str, int]]]:
    """``ranktop simulate`` and a Prometheus scraping it, once every rank is in; yields
    Prometheus's URL and the two processes' pids."""
    sys.path.insert(0, str(REPO))
    from tests.integration.cluster import Prometheus, Simulator

    with tempfile.TemporaryDirectory() as folder, contextlib.chdir(REPO):
        simulator = Simulator(SCENARIO, seed=7, nodes=nodes)
        try:
            prometheus = Prometheus(Path(folder), [simulator.port], interval=scrape)
            try:
                prometheus.wait_for_series("count(DCGM_FI_DEV_GPU_TEMP)", nodes * 8,
                                           timeout=60 + nodes)
                yield prometheus.url, {"prometheus": prometheus.process.pid,
                                       "simulator": simulator.process.pid}
            finally:
                prometheus.stop()
        finally:
            simulator.stop()


def measure_prometheus(nodes: int = 64, seconds: float = 60.0, warmup: float = 5.0,
                       scrape: str = "2s", refresh: float | None = None) -> dict:
    """``measure`` for the console polling a real Prometheus."""
    extra = ["--refresh", str(refresh)] if refresh else []
    with prometheus_cluster(nodes, scrape) as (url, pids):
        ranks = nodes * 8
        return measure(["--prometheus", url, *extra], f"ranks {ranks}/{ranks} up", seconds,
                       warmup, timeout=120.0, others=pids)


def measure_demo(nodes: int = 64, seconds: float = 60.0, warmup: float = 5.0,
                 refresh: float | None = None) -> dict:
    """``measure`` for ``ranktop --demo``."""
    extra = ["--refresh", str(refresh)] if refresh else []
    ranks = nodes * 8
    return measure(["--demo", "--nodes", str(nodes), *extra], f"ranks {ranks}/{ranks} up",
                   seconds, warmup, timeout=60.0 + ranks / 200)


def report(r: dict, refresh: float | None) -> None:
    percent = r["percent"]
    print(f"first frame after {r['first_ms']:.0f} ms; window {r['window_s']:.1f} s at refresh "
          f"{refresh or 'default (2)'} s")
    print(f"cpu: {percent:.2f} % of one core (goal <= {GOAL_PERCENT:g} %: "
          f"{'met' if percent <= GOAL_PERCENT else 'NOT met'})")
    for name, other in r["others"].items():
        print(f"  {name} meanwhile: {other:.2f} % of one core")
    print(f"terminal output: {r['bytes_per_s']:,.0f} bytes/s")
    print("by thread (cpu s in the window):")
    for key, used in sorted(r["threads"].items()):
        print(f"  {key:<28} {used:6.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measurement window")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds after the first frame")
    parser.add_argument("--refresh", type=float, default=None,
                        help="pass --refresh to ranktop (default: its own, 2 s)")
    parser.add_argument("--nodes", type=int, default=64, help="8 GPUs each (default 64)")
    parser.add_argument("--prometheus", action="store_true",
                        help="poll a real Prometheus scraping `ranktop simulate`")
    parser.add_argument("--scrape", default="2s", help="Prometheus's scrape interval")
    args = parser.parse_args()
    try:
        if args.prometheus:
            result = measure_prometheus(args.nodes, args.seconds, args.warmup, args.scrape,
                                        args.refresh)
        else:
            result = measure_demo(args.nodes, args.seconds, args.warmup, args.refresh)
    except (RuntimeError, TimeoutError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    report(result, args.refresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
