"""Bytes per message between the UI and an engine in its own process, per poll, beside
what sending the whole analysis (history and rank map included) would cost.

    .venv/bin/python bench/engine_messages.py [--nodes 64 --nodes 2048] [--polls 12]

The demo in the headless console (120x40), polled every 2 s of a fake clock; each message
is pickled exactly as the pipe to the engine process pickles it (``ForkingPickler``):
the snapshot, the maps' geometry asked for and the levels planned back, and one rank's
history as the rank screen asks for it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from dataclasses import replace
from multiprocessing.reduction import ForkingPickler

import headless
from ranktop.tui.engine.wire import Sent

TICK_SECONDS = 2.0


def size(value: object) -> int:
    return len(ForkingPickler.dumps(value))


async def measure(nodes: int, polls: int) -> dict[str, list[int]]:
    app = headless.demo_app(at=40.0, nodes=nodes)
    sent = Sent()
    found: dict[str, list[int]] = {k: [] for k in
                                   ("snapshot", "whole analysis", "map geometry",
                                    "map levels", "rank history")}
    async with app.run_test(size=(120, 40)) as pilot:
        engine = app.engine
        for poll in range(polls):
            app.clock.now += TICK_SECONDS
            snapshot = await engine.poll()
            compact = sent.compact(snapshot)
            maps = app.cluster.map_geometry()
            planned = await engine.plan_maps(snapshot.version, maps)
            app.cluster.show_analysis(snapshot.analysis, planned)
            await pilot.pause()
            if poll == 0:
                continue  # the first carries the rank map, once
            found["snapshot"].append(size(compact))
            found["whole analysis"].append(size(replace(snapshot)))
            found["map geometry"].append(size(maps))
            found["map levels"].append(size(dict(planned)))
            found["rank history"].append(size(await engine.rank_history(5)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, action="append")
    parser.add_argument("--polls", type=int, default=12)
    args = parser.parse_args()
    for nodes in args.nodes or [64, 2048]:
        found = asyncio.run(measure(nodes, args.polls))
        print(f"{nodes * 8} ranks, {args.polls - 1} polls (after the first):")
        for kind, sizes in found.items():
            print(f"  {kind:15} median {statistics.median(sizes) / 1024:9.1f} KiB"
                  f"   max {max(sizes) / 1024:9.1f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
