"""A rank's log read through the engine in its own process, page by page, beside the same
reads in the UI's process: how long the rank screen's tail and a flood's follow take, in how
many messages, the biggest of them.

    .venv/bin/python bench/log_pages.py [--flood-mb 4] [--repeat 5]

Two files for the rank (stderr and stdout, stamped lines as torchrun writes them); the
flood is appended to one of them between two follows.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from ranktop.tui.engine.link import packed
from ranktop.tui.engine.process import ProcessEngine
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, Settings, load_settings
from ranktop.tui.sources.demo import DemoSource, demo_source

RANK = 5
TAIL_LINES = 300  # the rank screen's
START = 1_764_000_000.0


def demo(settings: Settings) -> DemoSource:
    return demo_source(DemoSettings(4, 8, seed=7), lambda: START + 40.0, started=START)


def lines(count: int, what: str) -> str:
    return "".join(f"2026-11-25 04:{i // 60 % 60:02d}:{i % 60:02d} {what} {i}\n"
                   for i in range(count))


class Counted:
    """The engine's answers to log requests, counted and weighed as they crossed."""

    def __init__(self, engine: ProcessEngine) -> None:
        self.sizes: list[int] = []
        link = engine._link
        answer = link.answer

        def weighed(kind: str, *args: object) -> object:
            value = answer(kind, *args)
            self.sizes.append(len(packed(value)))
            return value
        link.answer = weighed


def timed(read) -> tuple[float, object]:
    began = time.perf_counter()
    value = read()
    return (time.perf_counter() - began) * 1000, value


def measure(engine, folder: Path, flood_mb: float, counted: Counted | None) -> dict:
    rank_map = engine.latest.analysis.rank_map
    (log,), _ = engine.open_logs(rank_map, RANK)
    if counted:
        counted.sizes.clear()
    tail_ms, _ = timed(lambda: log.tail(TAIL_LINES))
    tail_messages = len(counted.sizes) if counted else 0
    log.follow()
    with (folder / f"rank{RANK}.out.log").open("a") as out:
        out.write(lines(int(flood_mb * 2**20 / 90), "flood " + "x" * 50))
    if counted:
        counted.sizes.clear()
    follow_ms, followed = timed(log.follow)
    log.close()
    found = {"tail ms": tail_ms, "follow ms": follow_ms, "followed lines": len(followed)}
    if counted:
        found.update({"tail messages": tail_messages, "follow messages": len(counted.sizes),
                      "biggest message KiB": max(counted.sizes) / 1024})
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flood-mb", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        settings = replace(load_settings(environ={}), log_spec=str(folder / "rank{rank}.*.log"))
        for engine_name in ("thread", "process"):
            runs = []
            for _ in range(args.repeat):
                (folder / f"rank{RANK}.err.log").write_text(lines(5000, "step"))
                (folder / f"rank{RANK}.out.log").write_text(lines(500, "NCCL INFO ring"))
                if engine_name == "thread":
                    engine, counted = ThreadEngine(settings, demo(settings)), None
                else:
                    engine = ProcessEngine(settings, demo)
                    counted = Counted(engine)
                try:
                    runs.append(measure(engine, folder, args.flood_mb, counted))
                finally:
                    engine.close()
            print(f"{engine_name} engine, {args.flood_mb:g} MB flood, median of {args.repeat}:")
            for key in runs[0]:
                print(f"  {key}: {statistics.median(run[key] for run in runs):,.1f}")


if __name__ == "__main__":
    main()
