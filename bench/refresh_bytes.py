"""Bytes to the terminal per refresh over the demo's whole 5-minute loop, beside tmux's
discard threshold for the pane (cols x rows x 8 bytes), with the worst cases named: the
anomaly panel growing or shrinking, a rank dying, a resize.

    .venv/bin/python bench/refresh_bytes.py [--nodes 64] [--size 120x40] [--color-system 256]

Headless, on a fake clock moved 2 s per poll. Each colour system in a process of its own
(Textual caches escape codes for the first one it meets).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys

import headless

LOOP_SECONDS = 300.0
TICK_SECONDS = 2.0


def threshold(cols: int, rows: int) -> int:
    """tmux discards a pane's pending output past about 8 bytes per cell of the pane."""
    return cols * rows * 8


async def measure(nodes: int, cols: int = 120, rows: int = 40, seconds: float = LOOP_SECONDS,
                  start: float = 0.0, color_system: str = "256") -> dict:
    """Bytes of each refresh over ``seconds`` of the scenario from ``start``, then a resize
    (one column narrower and back). Returns figures in bytes, and the refresh kinds."""
    app = headless.demo_app(at=start, nodes=nodes, color_system=color_system)
    async with app.run_test(size=(cols, rows)) as pilot:
        await pilot.pause()
        meter = headless.TerminalBytes(app)
        await app.poll_once()
        await pilot.pause(0.1)
        first = meter.take()
        ticks: list[tuple[int, str]] = []  # (bytes, what changed)
        for _ in range(int(seconds / TICK_SECONDS)):
            before = app.analysis
            app.clock.now += TICK_SECONDS
            await app.poll_once()
            await pilot.pause()
            ticks.append((meter.take(), _what_changed(before, app.analysis)))
        panel = await _panel_changes(app, pilot, meter)
        await pilot.resize_terminal(cols - 1, rows)
        await pilot.pause(0.1)
        resize_updates = len(meter.sent)  # Textual lays a resized screen out more than once
        resize = meter.take()
        await pilot.resize_terminal(cols, rows)
        await pilot.pause(0.1)
        resize_updates = max(resize_updates, len(meter.sent))
        resize = max(resize, meter.take())
        full = meter.full_screen()
    sizes = [b for b, _ in ticks]
    worst = {kind: max((b for b, k in ticks if k == kind), default=0)
             for kind in ("panel", "rank died", "steady")}
    limit = threshold(cols, rows)
    return {
        "ranks": nodes * 8, "cols": cols, "rows": rows, "ticks": len(ticks),
        "first": first, "median": statistics.median(sizes),
        "p90": statistics.quantiles(sizes, n=10)[8], "max": max(sizes),
        "worst_panel": worst["panel"], "worst_rank_died": worst["rank died"],
        "worst_steady": worst["steady"], "resize": resize, "full_screen": full,
        "panel_only": max(panel), "resize_updates": resize_updates,
        "threshold": limit, "over_quarter": sum(b > limit / 4 for b in sizes),
        "over_threshold": sum(b > limit for b in sizes),
    }


async def _panel_changes(app, pilot, meter: headless.TerminalBytes) -> list[int]:
    """The bytes of the anomaly panel alone changing, the frame the same: one more
    anomaly, then six more, then back to none."""
    from dataclasses import replace

    from ranktop.tui.core.anomaly import Anomaly

    shown = app.analysis
    extra = tuple(Anomaly("thermal", "major", 8 * i + 3, "GPU 88 °C, throttling", since=0.0,
                          held=30.0, confirm_after=10.0) for i in range(7))
    sizes = []
    for anomalies in (shown.anomalies + extra[:1], shown.anomalies + extra, ()):
        app.cluster.show_analysis(replace(shown, anomalies=anomalies))
        await pilot.pause()
        sizes.append(meter.take())
    app.cluster.show_analysis(shown)
    await pilot.pause()
    meter.take()
    return sizes


def _what_changed(before, after) -> str:
    if after.ranks_up < before.ranks_up:
        return "rank died"
    if len(after.anomalies) != len(before.anomalies):
        return "panel"
    return "steady"


def report(r: dict) -> None:
    limit = r["threshold"]
    print(f"== {r['ranks']} ranks, {r['cols']}x{r['rows']}, {r['ticks']} refreshes; "
          f"tmux threshold {limit:,} bytes (25 %: {limit // 4:,})")
    print(f"first frame {r['first']:,}; per refresh median {r['median']:,.0f}, "
          f"p90 {r['p90']:,.0f}, max {r['max']:,}")
    print(f"worst: panel grew/shrank {r['worst_panel']:,}, a rank died "
          f"{r['worst_rank_died']:,}, steady {r['worst_steady']:,}, resize {r['resize']:,} "
          f"in {r['resize_updates']} updates (whole screen {r['full_screen']:,})")
    print(f"the anomaly panel alone changing (one more, seven more, none): worst "
          f"{r['panel_only']:,}")
    print(f"refreshes over 25 % of the threshold: {r['over_quarter']}, over it: "
          f"{r['over_threshold']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=64, help="8 GPUs each")
    parser.add_argument("--size", default="120x40", help="COLSxROWS")
    parser.add_argument("--seconds", type=float, default=LOOP_SECONDS)
    parser.add_argument("--color-system", choices=("256", "truecolor"), default="256")
    args = parser.parse_args()
    try:
        cols, rows = (int(n) for n in args.size.lower().split("x"))
    except ValueError:
        print(f"refresh_bytes: --size wants COLSxROWS, not {args.size!r}", file=sys.stderr)
        return 2
    headless.set_colour_system(args.color_system)
    report(asyncio.run(measure(args.nodes, cols, rows, args.seconds,
                                 color_system=args.color_system)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
