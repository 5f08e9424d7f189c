"""The incident bundle at scale: how long writing one takes and how big it is.

For each size, the demo's job is polled from 170 s to 200 s into its scenario (rank 455
dies at 172 s: the hang, the richest moment), its ranks writing their logs; then a bundle
is written as a folder and as a .tar.gz (gathering from the engine, the documents, the
disk), and the screen is captured as the bundle key does on the UI's thread (SVG and text,
in a headless console of the same job). Also: reading the bundle back (`ranktop open`).

    .venv/bin/python bench/bundle.py [--nodes 64 2048]

The load average is printed: the figures depend on what else runs.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import tempfile
import time
from pathlib import Path

from ranktop.tui.app.bundling import shown_text
from ranktop.tui.app.console import RanktopApp
from ranktop.tui.bundle.make import Screen, make_bundle
from ranktop.tui.bundle.read import read_bundle
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

START = 1_800_000_000.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


async def measure(nodes: int, folder: Path) -> None:
    clock = Clock(START + 170.0)
    settings = load_settings(environ={})
    source = demo_source(DemoSettings(nodes, 8, seed=7), clock, started=START,
                         log_root=folder / "logs")
    engine = ThreadEngine(settings, source, clock=clock)
    while clock.now <= START + 200.0:
        await engine.poll()
        clock.now += settings.refresh_seconds
    snapshot = await engine.settle(60.0)
    ranks = len(snapshot.analysis.rank_map)
    for packed in (False, True):
        chosen = dataclasses.replace(settings, bundle=dataclasses.replace(
            settings.bundle, format="tar.gz" if packed else "folder"))
        began = time.perf_counter()
        path = await make_bundle(engine, chosen, snapshot, 455, Screen(), folder / "out")
        took = time.perf_counter() - began
        kind = "tar.gz" if packed else "folder"
        print(f"{ranks:>6} ranks  {kind:<6}  written in {took:5.2f} s  "
              f"{size_of(path) / 1e6:6.2f} MB")
        if packed:
            began = time.perf_counter()
            read_bundle(path)
            print(f"{ranks:>6} ranks  read back (ranktop open) in "
                  f"{time.perf_counter() - began:5.2f} s")
    app = RanktopApp(settings, engine=engine, poll=False, clock=clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        began = time.perf_counter()
        screen = Screen(app.export_screenshot(), shown_text(app))
        took = (time.perf_counter() - began) * 1000
    print(f"{ranks:>6} ranks  screen captured on the UI thread in {took:5.0f} ms "
          f"(SVG {len(screen.svg) / 1e3:.0f} kB)")
    engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[64, 2048])
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    for nodes in args.nodes:
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(measure(nodes, Path(folder)))


if __name__ == "__main__":
    main()
