"""Bytes per message between the UI and an engine in its own process, per poll, beside
what sending the whole analysis (history and rank map included) would cost.

    .venv/bin/python bench/engine_messages.py [--nodes 64 --nodes 2048] [--polls 12]

The demo in the headless console (120x40), polled every 2 s of a fake clock; each message
is pickled exactly as the pipe to the engine process pickles it (``ForkingPickler``): the
poll request (the maps' geometry rides on it only when it changed: the first poll), the
snapshot with its maps' levels, and one rank's history as the rank screen asks for it. A
poll is one round trip.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from collections import Counter
from dataclasses import replace
from multiprocessing.reduction import ForkingPickler

import headless
from ranktop.tui.engine.protocol import Poll
from ranktop.tui.engine.wire import Sent

TICK_SECONDS = 2.0


def size(value: object) -> int:
    return len(ForkingPickler.dumps(value))


async def measure(nodes: int, polls: int) -> dict[str, list[int]]:
    app = headless.demo_app(at=40.0, nodes=nodes)
    sent = Sent()
    sent_maps: tuple | None = None
    found: dict[str, list[int]] = {k: [] for k in
                                   ("poll request", "snapshot", "map levels", "whole analysis",
                                    "rank history", "round trips")}
    async with app.run_test(size=(120, 40)) as pilot:
        engine = app.engine
        asked = counting_requests(engine)
        for poll in range(polls):
            app.clock.now += TICK_SECONDS
            maps = app.cluster.map_geometry()
            request = Poll(None if maps == sent_maps else maps)
            sent_maps = maps
            before = sum(asked.values())
            await app.poll_once()
            await pilot.pause()
            snapshot = app.live
            compact = sent.compact(snapshot)
            if poll < 2:
                continue  # the first carries the rank map once, the second maps laid out
            found["round trips"].append(sum(asked.values()) - before)
            found["poll request"].append(size(request))
            found["snapshot"].append(size(replace(compact, levels={})))
            found["map levels"].append(size(dict(snapshot.levels)))
            found["whole analysis"].append(size(replace(snapshot, levels={})))
            found["rank history"].append(size(await engine.rank_history(5)))
    return found


def counting_requests(engine) -> Counter:
    """Count each request the app makes of ``engine`` from now on."""
    asked: Counter = Counter()
    for name in ("poll", "settle", "at", "rank_history"):
        method = getattr(engine, name)

        async def counted(*args, _method=method, _name=name, **kwargs):
            asked[_name] += 1
            return await _method(*args, **kwargs)

        setattr(engine, name, counted)
    return asked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, action="append")
    parser.add_argument("--polls", type=int, default=12)
    args = parser.parse_args()
    for nodes in args.nodes or [64, 2048]:
        found = asyncio.run(measure(nodes, args.polls))
        print(f"{nodes * 8} ranks, {args.polls - 2} polls (after the first two):")
        print(f"  round trips per poll: {statistics.median(found.pop('round trips')):.0f}")
        for kind, sizes in found.items():
            print(f"  {kind:15} median {statistics.median(sizes) / 1024:9.1f} KiB"
                  f"   max {max(sizes) / 1024:9.1f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
