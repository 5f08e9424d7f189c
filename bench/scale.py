"""ranktop at 512 to 16,384 ranks (and 100,000 in the demo): one table, written to
bench/results.md with the date and the machine.

    .venv/bin/python bench/scale.py                       # everything: about 30-40 minutes
    .venv/bin/python bench/scale.py --sizes 512,4096 --quick
    .venv/bin/python bench/scale.py --sizes 512 --skip pty,prometheus
    .venv/bin/python bench/scale.py --sizes 512,16384 --only asks --output /tmp/asks.md

Each figure comes from one of the other scripts here, imported:
- what a poll asks of Prometheus (wall time, JSON, requests, Prometheus's own time, the
  poller's peak RSS) from ``asks.measure``;
- the Prometheus columns from ``scale_prometheus.measure`` (a real Prometheus scraping
  ``ranktop simulate``; "n/a" when that script or ``prometheus`` is missing);
- the UI thread and the demo's analysis from ``ui_poll.measure`` (headless);
- bytes per refresh from ``refresh_bytes.measure`` (headless, 120x40, 256 colours);
- keypress to frame from ``keys.measure_while_polling``, idle CPU from ``idle_cpu``,
  launch to first frame from ``startup.measure`` (each a real ``ranktop`` in a 120x40 pty);
- RSS after 10 minutes of history from a fresh process polling the demo (``--rss-child``).
Timings are of whatever machine runs it, with whatever else runs there: ratios taken in one
run mean more than absolute figures on a busy machine.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from importlib.metadata import version

import headless
import idle_cpu
import keys
import refresh_bytes
import startup
import ui_poll

RESULTS = headless.REPO / "bench" / "results.md"
SIZES = (512, 4096, 16384, 100_000)
DEMO_ONLY = 100_000  # too big to scrape here: the demo only
BIG = 16384  # from here on, one launch of the demo for both the first frame and the keys
PARTS = ("asks", "prometheus", "headless", "pty", "rss")
HISTORY_POLLS = 300  # 10 minutes at the default 2 s refresh
NA = "n/a"


def nodes_of(ranks: int) -> int:
    return -(-ranks // 8)


# -- one figure at a time; each returns text for a cell ---------------------------------------


def prometheus_rows(ranks: int, quick: bool) -> dict[str, str]:
    """Poll against a real Prometheus, beside the raw HTTP + JSON of the same queries."""
    try:
        import scale_prometheus
    except ImportError:
        return {}
    if shutil.which("prometheus") is None or ranks == DEMO_ONLY:
        return {}
    r = scale_prometheus.measure(ranks, 3 if quick else 7)
    wall_ratio = r.get("ratio_wall", r.get("wall_ratio"))
    cpu_ratio = r.get("ratio_cpu", r.get("cpu_ratio"))
    asked = r.get("bytes_per_poll", r.get("json_bytes"))
    queries = r.get("queries_per_poll", r.get("queries"))
    rows = {
        "poll wall: ranktop / raw HTTP+JSON":
            f"{r['poll_wall_ms']:,.0f} / {r['raw_wall_ms']:,.0f} ms ({wall_ratio:.2f}x)",
        "poll CPU: ranktop / raw HTTP+JSON":
            f"{r['poll_cpu_ms']:,.0f} / {r['raw_cpu_ms']:,.0f} ms ({cpu_ratio:.2f}x)",
        "asked of Prometheus per poll": f"{asked / 1e6:.2f} MB in {queries} queries",
        "analysis per poll (Prometheus frame)": f"{r['analysis_ms']:,.0f} ms",
        "full refresh, Prometheus (poll + analysis)":
            f"{r['poll_wall_ms'] + r['analysis_ms']:,.0f} ms",
    }
    if "ui_stall_max_ms" in r:
        rows["UI stall while polling, median / max"] = (
            f"{r['ui_stall_ms']:,.0f} / {r['ui_stall_max_ms']:,.0f} ms")
    return rows


def asks_rows(ranks: int, quick: bool) -> dict[str, str]:
    """What a poll asks of a real Prometheus: wall time, JSON, requests, server time, the
    poller's peak RSS (``asks.measure``)."""
    import asks

    if shutil.which("prometheus") is None or ranks == DEMO_ONLY:
        return {}
    return asks.cells(asks.measure(ranks, 5 if quick else 12))


def headless_rows(ranks: int, quick: bool) -> dict[str, str]:
    """The UI thread per poll, the demo's analysis and refresh, bytes per refresh."""
    nodes = nodes_of(ranks)
    frames = 3 if ranks >= DEMO_ONLY else (5 if quick else 10)
    ui = asyncio.run(ui_poll.measure(nodes, frames))
    # The whole scenario loop at 512; past it, the minute around the rank's death (172 s).
    seconds, start = (300.0, 0.0) if ranks <= 512 and not quick else (
        (16.0 if ranks >= DEMO_ONLY else 40.0), 160.0)
    b = asyncio.run(refresh_bytes.measure(nodes, seconds=seconds, start=start))
    limit = b["threshold"]

    def share(n: float) -> str:
        return f"{n / 1000:,.1f} KB ({100 * n / limit:.0f} %)"

    return {
        "UI thread per poll (show + render CPU)":
            f"{ui['ui_ms']:.1f} ms (max {ui['ui_max_ms']:.1f})",
        "heatmap rows redrawn per poll": f"{ui['rows']:.1f}",
        "analysis per poll (demo frame)": f"{ui['analysis_ms']:,.0f} ms",
        "full refresh, demo (poll + analysis + plan + draw)": f"{ui['refresh_ms']:,.0f} ms",
        "bytes per refresh, median / p90": f"{share(b['median'])} / {share(b['p90'])}",
        "worst refresh: panel changes / rank dies / data":
            f"{share(b['worst_panel'])} / {share(b['worst_rank_died'])} / "
            f"{share(b['worst_steady'])}",
        "anomaly panel alone changing (worst)": share(b["panel_only"]),
        "resize: all its updates (one whole screen)":
            f"{share(b['resize'])} in {b['resize_updates']} ({b['full_screen'] / 1000:,.1f} KB)",
        "refreshes over 25 % of tmux's threshold":
            f"{b['over_quarter']} of {b['ticks']} ({limit:,} B = 120x40x8)",
    }


def pty_rows(ranks: int, quick: bool, prometheus_idle: bool) -> dict[str, str]:
    """Keypress to frame while polling, idle CPU, launch to first frame: real ptys."""
    nodes = nodes_of(ranks)
    rows = {}
    timeout = 60.0 + ranks / 200
    k = keys.measure_while_polling(nodes, presses=5 if quick else 10, timeout=timeout)
    if quick or ranks >= BIG:  # each launch of a big demo writes, then removes, its logs
        rows["launch to first frame (demo)"] = f"{k['first_ms']:,.0f} ms (1 run)"
    else:
        launch = startup.measure(3, nodes, timeout=timeout)
        rows["launch to first frame (demo)"] = f"{launch['first_ms']:,.0f} ms (median of 3)"
    rows["keypress to frame while polling, median / p90 / max"] = (
        f"{k['median_ms']:.0f} / {k['p90_ms']:.0f} / {k['max_ms']:.0f} ms")
    seconds = 20.0 if quick else 60.0
    if ranks < DEMO_ONLY:
        idle = idle_cpu.measure_demo(nodes, seconds)
        rows[f"idle CPU, demo ({seconds:.0f} s)"] = f"{idle['percent']:.1f} % of a core"
    if prometheus_idle and ranks == 512 and shutil.which("prometheus"):
        p = idle_cpu.measure_prometheus(nodes, seconds)
        server = ", ".join(f"{name} {v:.1f} %" for name, v in p["others"].items())
        rows[f"idle CPU, real Prometheus ({seconds:.0f} s)"] = (
            f"{p['percent']:.1f} % of a core (meanwhile {server})")
    return rows


def rss_rows(ranks: int, quick: bool) -> dict[str, str]:
    """Resident memory of a fresh process after polling the demo for 10 minutes of
    history (fewer with --quick, said in the cell)."""
    polls = 30 if quick or ranks >= DEMO_ONLY else HISTORY_POLLS
    done = subprocess.run([sys.executable, __file__, "--rss-child", str(ranks), str(polls)],
                          capture_output=True, text=True, timeout=3600)
    if done.returncode:
        return {"RSS after history": f"failed: {done.stderr.strip().splitlines()[-1:]}"}
    r = json.loads(done.stdout)
    minutes = polls * 2 / 60
    return {"RSS after 10 min of history (demo, app headless)":
            f"{r['rss_mb']:,.0f} MB (at start {r['start_mb']:,.0f} MB)"
            + ("" if polls == HISTORY_POLLS else f" after {minutes:g} min only")}


def rss_child(ranks: int, polls: int) -> int:
    """In a fresh process: the headless app polling the demo ``polls`` times, 2 s apart on
    its fake clock; prints the RSS before and after, in MB, as JSON."""
    async def run() -> tuple[float, float]:
        app = headless.demo_app(at=0.0, nodes=nodes_of(ranks))
        async with app.run_test(size=(120, 40)) as pilot:
            await app.poll_once()
            await pilot.pause()
            start = rss_mb()
            for _ in range(polls):
                app.clock.now += 2.0
                await app.poll_once()
                await pilot.pause()
            return start, rss_mb()

    start, end = asyncio.run(run())
    print(json.dumps({"start_mb": start, "rss_mb": end}))
    return 0


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- the table -------------------------------------------------------------------------------


def machine() -> str:
    model = ""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next((line.split(":", 1)[1].strip() for line in cpuinfo
                          if line.startswith("model name")), "")
    except OSError:
        model = platform.processor()
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{os.cpu_count()} CPUs (nproc), {model or 'unknown CPU'}; Python "
            f"{platform.python_version()}, Textual {version('textual')}; load average {load} "
            "when the run began")


def table(sizes: list[int], results: dict[int, dict[str, str]]) -> str:
    names: list[str] = []
    for size in sizes:
        names += [name for name in results[size] if name not in names]
    head = ["what"] + [f"{s:,}" + (" (demo)" if s == DEMO_ONLY else "") for s in sizes]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * len(sizes) + "|"]
    for name in names:
        cells = [results[size].get(name, NA) for size in sizes]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    return "\n".join(lines)


def run_part(what: str, action: Callable[[], dict[str, str]]) -> dict[str, str]:
    """One part's figures; a part that fails says so in the log and leaves n/a."""
    began = time.monotonic()
    try:
        rows = action()
    except Exception as error:  # one broken part must not lose the others' figures
        print(f"  {what}: FAILED: {error.__class__.__name__}: {error}", file=sys.stderr,
              flush=True)
        return {}
    print(f"  {what}: {time.monotonic() - began:.0f} s", file=sys.stderr, flush=True)
    return rows


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        sizes = []
    if not sizes or any(size < 8 for size in sizes):
        raise argparse.ArgumentTypeError(f"want ranks like 512,4096 (at least 8), not {text!r}")
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=parse_sizes, default=list(SIZES),
                        help="ranks, comma-separated (default 512,4096,16384,100000)")
    parser.add_argument("--quick", action="store_true",
                        help="fewer samples, shorter windows and history (minutes, not half "
                             "an hour)")
    parser.add_argument("--skip", default="", help=f"parts to leave out: {','.join(PARTS)}")
    parser.add_argument("--only", default="", help="the parts to run, leaving out the others")
    parser.add_argument("--output", default=str(RESULTS), help="where to write the table")
    parser.add_argument("--rss-child", nargs=2, type=int, metavar=("RANKS", "POLLS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    headless.set_colour_system("256")
    if args.rss_child:
        return rss_child(*args.rss_child)
    skip = {part.strip() for part in args.skip.split(",") if part.strip()}
    only = {part.strip() for part in args.only.split(",") if part.strip()}
    if only - set(PARTS):
        print(f"scale: --only takes {', '.join(PARTS)}, not {', '.join(only - set(PARTS))}",
              file=sys.stderr)
        return 2
    if only:
        skip |= set(PARTS) - only
    if skip - set(PARTS):
        print(f"scale: --skip takes {', '.join(PARTS)}, not {', '.join(skip - set(PARTS))}",
              file=sys.stderr)
        return 2

    began = datetime.datetime.now(datetime.timezone.utc)
    about = machine()
    results: dict[int, dict[str, str]] = {}
    for size in args.sizes:
        print(f"{size:,} ranks", file=sys.stderr, flush=True)
        rows: dict[str, str] = {}
        if "asks" not in skip:
            rows |= run_part("asks", lambda s=size: asks_rows(s, args.quick))
        if "prometheus" not in skip:
            rows |= run_part("prometheus", lambda s=size: prometheus_rows(s, args.quick))
        if "headless" not in skip:
            rows |= run_part("headless", lambda s=size: headless_rows(s, args.quick))
        if "pty" not in skip:
            rows |= run_part("pty", lambda s=size: pty_rows(
                s, args.quick, "prometheus" not in skip))
        if "rss" not in skip:
            rows |= run_part("rss", lambda s=size: rss_rows(s, args.quick))
        results[size] = rows
    minutes = (datetime.datetime.now(datetime.timezone.utc) - began).total_seconds() / 60
    text = "\n".join([
        "# ranktop at scale",
        "",
        f"{began:%Y-%m-%d %H:%M} UTC, `bench/scale.py {' '.join(sys.argv[1:])}` "
        f"({minutes:.0f} min). {about}.",
        "",
        table(args.sizes, results),
        "",
        "Cells read n/a where a part was skipped, failed (its error is in the run's log) or "
        "does not apply (no Prometheus at 100,000 ranks: the demo only). The tmux threshold "
        "is the pane's cells x 8 bytes; a refresh above it may be dropped by tmux.",
        "",
    ])
    print(text)
    with open(args.output, "w") as out:
        out.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
