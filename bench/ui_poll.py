"""Time one poll spends on the UI thread: drawing a new frame into the cluster screen.

    .venv/bin/python bench/ui_poll.py [--nodes 64 --nodes 2048]

Headless, 120x40, the demo at 512 and 16,384 ranks. Each poll's analysis and the maps'
levels are worked out first, as the poll worker's thread does in the app (not timed). Then
two figures per poll: ``show_analysis`` alone (wall), and the UI thread's CPU from there
until the frame is composed and encoded for the terminal (show + render). Heatmap rows
drawn afresh are counted too.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

import headless
from ranktop.tui.engine.maps import plan_maps

FRAMES = 10


async def measure(nodes: int, frames: int = FRAMES, cols: int = 120, rows: int = 40) -> dict:
    """Milliseconds per poll on the UI thread at ``nodes`` x 8 ranks (median and max)."""
    app = headless.demo_app(at=40.0, nodes=nodes)
    async with app.run_test(size=(cols, rows)) as pilot:
        await app.poll_once()
        await pilot.pause()
        analyser = app.engine.pipeline.analyser  # the poll thread's part, done before timing
        status, rank_map = app.engine.source.status(), app.engine.source.rank_map
        analyses, analysis_times = [], []
        for i in range(frames):
            frame = app.engine.source.cluster.frame_at(40 + 2 * i)
            started = time.perf_counter()
            analyses.append(analyser.analyse(frame, status, rank_map))
            analysis_times.append(time.perf_counter() - started)
        geometry = app.cluster.map_geometry
        show, ui, drawn_rows = [], [], []
        with headless.counting_rows() as drawn:
            for analysis in analyses:
                planned = plan_maps(analysis, geometry())
                drawn.clear()
                wall, cpu = time.perf_counter(), time.thread_time()
                app.cluster.show_analysis(analysis, planned)
                show.append(time.perf_counter() - wall)
                await pilot.pause()  # the frame composed and written (headless: encoded)
                ui.append(time.thread_time() - cpu)
                drawn_rows.append(len(drawn))
        refresh = []  # whole polls: the demo's frame, the analysis, the plan, the drawing
        for _ in range(max(1, frames // 2)):
            app.clock.now += 2.0
            started = time.perf_counter()
            await app.poll_once()
            await pilot.pause()
            refresh.append(time.perf_counter() - started)
    return {"ranks": nodes * 8, "analysis_ms": statistics.median(analysis_times) * 1000,
            "refresh_ms": statistics.median(refresh) * 1000,
            "show_ms": statistics.median(show) * 1000,
            "show_max_ms": max(show) * 1000, "ui_ms": statistics.median(ui) * 1000,
            "ui_max_ms": max(ui) * 1000, "rows": statistics.mean(drawn_rows)}


def report(r: dict) -> None:
    print(f"{r['ranks']:>6} ranks: show_analysis median {r['show_ms']:5.1f} ms "
          f"(max {r['show_max_ms']:5.1f}); UI thread CPU per poll, show + render, median "
          f"{r['ui_ms']:5.1f} ms (max {r['ui_max_ms']:5.1f}); "
          f"{r['rows']:.1f} heatmap rows drawn per poll")
    print(f"        analysis (poll thread) median {r['analysis_ms']:5.1f} ms; whole refresh "
          f"(demo frame + analysis + plan + draw) median {r['refresh_ms']:5.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, action="append",
                        help="nodes of 8 GPUs (repeatable; default 64 and 2048)")
    parser.add_argument("--frames", type=int, default=FRAMES)
    args = parser.parse_args()
    headless.set_colour_system("256")
    for nodes in args.nodes or [64, 2048]:
        report(asyncio.run(measure(nodes, args.frames)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
