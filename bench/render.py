"""Headless render costs of the cluster screen at 120x40: one heatmap, the whole screen, and
the bytes one refresh tick sends to the terminal.

Textual caches each style's escape codes for the first colour system it meets, so every
(colour system, cluster size) pair runs in a subprocess of its own:

    .venv/bin/python bench/render.py                     # 256 and truecolor, 512 and 4,096 ranks
    .venv/bin/python bench/render.py --color-system 256 --nodes 64 [--reps 200] [--ticks 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIZE = (120, 40)
RUNS = [("256", 64), ("truecolor", 64), ("256", 512), ("truecolor", 512)]


def ms(samples: list[float]) -> str:
    """Median and p90 of seconds, in milliseconds."""
    p90 = statistics.quantiles(samples, n=10)[8]
    return f"median {statistics.median(samples) * 1000:7.2f} ms  p90 {p90 * 1000:7.2f} ms"


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


async def measure(args: argparse.Namespace) -> None:
    os.environ["TEXTUAL_COLOR_SYSTEM"] = args.color_system  # read when Textual is imported
    sys.path.insert(0, str(REPO))
    from ranktop.tui.core.metrics import ScaleTracker, present_median
    from ranktop.widgets.heatmap import Heatmap
    from ranktop.widgets.panel import MetricPanel
    from rich.control import Control
    from textual._compositor import CompositorUpdate

    from tests.tui.conftest import make_app

    drawn: list = []  # the heatmap rows drawn afresh (not from the row cache)
    draw_row = Heatmap._draw_row

    def counting_draw_row(self: Heatmap, y: int):
        strip = draw_row(self, y)
        drawn.append(strip)
        return strip

    Heatmap._draw_row = counting_draw_row
    app = make_app(at=0, nodes=args.nodes, gpus=8)
    sent: list[int] = []  # bytes of each update Textual hands to the terminal

    async with app.run_test(size=SIZE) as pilot:
        console = app.console
        display = app._display

        def capture(screen, renderable) -> None:
            if isinstance(renderable, CompositorUpdate):
                data = renderable.render_segments(console) + Control.move_to(0, 0).segment.text
                sent.append(len(data.encode()))
            display(screen, renderable)

        await pilot.pause()  # the empty screen of the mount is drawn before we listen
        app._display = capture
        n_ranks = len(app.engine.source.rank_map)
        hm = app.screen.query_one("#map-0", MetricPanel).heatmap
        await app.poll_once()
        await pilot.pause(0.1)  # the first frame's follow-up updates (titles, layout) too
        print(f"== {n_ranks} ranks, {console.color_system}, {SIZE[0]}x{SIZE[1]}: "
              f"map 1 is {hm.size.width}x{hm.size.height} cells, mode {hm.mode!r}")
        print(f"first poll (t=0): {sum(sent):,} bytes in {len(sent)} updates")

        # Refresh ticks: the fake clock moves 2 s per poll through the demo's scenario.
        tick_bytes, tick_rows, tick_row_bytes, tick_time = [], [], [], []
        for _ in range(args.ticks):
            sent.clear()
            drawn.clear()
            app.clock.now += 2
            started = time.perf_counter()
            await app.poll_once()
            await pilot.pause()
            tick_time.append(time.perf_counter() - started)
            tick_bytes.append(sum(sent))
            tick_rows.append(len(drawn))
            tick_row_bytes.append(sum(len(s.render(console).encode()) for s in drawn))
        print(f"per tick over {args.ticks} ticks (t=2..{2 * args.ticks} s): "
              f"{statistics.mean(tick_bytes):,.0f} bytes on average "
              f"(min {min(tick_bytes):,}, max {max(tick_bytes):,})")
        print(f"  heatmap rows redrawn per tick (4 maps): {statistics.mean(tick_rows):.1f} "
              f"(max {max(tick_rows)}); those rows alone: "
              f"{statistics.mean(tick_row_bytes):,.0f} bytes on average")
        print(f"  tick wall time (simulate + draw + compose + encode): {ms(tick_time)}")

        sent.clear()
        await asyncio.sleep(3.0)
        print(f"between polls (header clock only): {sum(sent) / 3.0:,.0f} bytes/s")

        # The whole screen, as after a resize or a screen switch.
        screen = app.screen
        compositor = screen._compositor
        stack = app._background_screens
        widgets = list(screen.walk_children(with_self=True))

        def full_frame() -> int:
            update = compositor.render_update(full=True, screen_stack=stack)
            return len(update.render_segments(console).encode())

        def drop_caches() -> None:
            for widget in widgets:
                widget._styles_cache.clear()
                if isinstance(widget, Heatmap):
                    widget._rows.clear()

        full_bytes = full_frame()
        warm = [timed(full_frame) for _ in range(args.reps // 4)]
        cold = []
        for _ in range(args.reps // 4):
            drop_caches()
            cold.append(timed(full_frame))
        print(f"whole screen: {full_bytes:,} bytes (the last tick, at the same moment, sent "
              f"{tick_bytes[-1]:,})")
        print(f"  cold (every line cache dropped): {ms(cold)}")
        print(f"  warm (line caches kept):         {ms(warm)}")

        # One heatmap (map 1, SM activity) drawn from scratch, then per poll.
        rows = range(hm.size.height)

        def draw_all_rows() -> None:
            for y in rows:
                hm.render_line(y)

        def redraw() -> None:
            hm._rows.clear()
            draw_all_rows()

        scratch = [timed(redraw) for _ in range(args.reps)]
        print(f"map 1 frame from scratch ({len(rows)} rows): {ms(scratch)}")

        metric = app.settings.metrics[hm.parent.metric_id]
        tracker = ScaleTracker(metric)
        cluster = app.engine.source.cluster
        frames = []
        for i in range(args.reps):
            values = cluster.frame_at(2.0 * (args.ticks + 1 + i)).values[metric.id]
            frames.append((values, tracker.update(present_median(values)) or (0.0, 1.0)))
        per_poll, per_poll_rows = [], []
        for values, (low, high) in frames:
            drawn.clear()
            started = time.perf_counter()
            hm.update_values(values, low, high)
            draw_all_rows()
            per_poll.append(time.perf_counter() - started)
            per_poll_rows.append(len(drawn))
        print(f"map 1 per poll (quantise {n_ranks} values + redraw changed rows): {ms(per_poll)}; "
              f"{statistics.mean(per_poll_rows):.1f} rows redrawn on average")


def run_all(args: argparse.Namespace) -> int:
    print(f"Python {sys.version.split()[0]}, Textual {version('textual')}, "
          f"{os.cpu_count()} cores, {args.reps} reps, {args.ticks} ticks")
    with tempfile.TemporaryDirectory(prefix="ranktop-bench-") as config:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("RANKTOP_", "TEXTUAL_")) and k != "NO_COLOR"}
        env["XDG_CONFIG_HOME"] = config
        for color_system, nodes in RUNS:
            command = [sys.executable, __file__, "--color-system", color_system,
                       "--nodes", str(nodes), "--reps", str(args.reps), "--ticks", str(args.ticks)]
            print(flush=True)
            try:
                done = subprocess.run(command, env=env, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                print(f"FAILED: {color_system} at {nodes} nodes took over {args.timeout:g} s")
                return 1
            if done.returncode:
                return done.returncode
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--color-system", choices=("256", "truecolor"),
                        help="measure one colour system in this process (default: all runs)")
    parser.add_argument("--nodes", type=int, default=64, help="8 GPUs each (default 64: 512)")
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--ticks", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=600.0, help="per subprocess")
    args = parser.parse_args()
    if args.color_system is None:
        return run_all(args)
    asyncio.run(asyncio.wait_for(measure(args), args.timeout))
    return 0


if __name__ == "__main__":
    sys.exit(main())
