"""Time one poll spends on the UI thread: drawing a new frame into the cluster screen.

    .venv/bin/python bench/ui_poll.py

Headless, 120x40, the demo at 512 and 16,384 ranks. Everything else a poll does (the source,
detection, history, hang triage) runs in the poll worker's thread and is not counted here.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.tui.conftest import make_app

FRAMES = 10


async def measure(nodes: int) -> None:
    app = make_app(at=40.0, nodes=nodes)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        frames = [app.source.cluster.frame_at(40 + 2 * i) for i in range(FRAMES)]
        analyser = app.pipeline.analyser  # the poll thread's part, done before timing
        status, rank_map = app.source.status(), app.source.rank_map
        analyses = [analyser.analyse(frame, status, rank_map) for frame in frames]
        samples = []
        for analysis in analyses:
            started = time.perf_counter()
            app.cluster.show_analysis(analysis)
            samples.append(time.perf_counter() - started)
            await pilot.pause()
    print(f"{nodes * 8:>6} ranks: show_analysis on the UI thread, median "
          f"{statistics.median(samples) * 1000:5.1f} ms, max {max(samples) * 1000:5.1f} ms")


def main() -> int:
    for nodes in (64, 2048):
        asyncio.run(measure(nodes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
