"""Regenerate the README's SVG screenshots from the running demo.

    .venv/bin/python screenshots/make.py

The demo runs on a fixed seed and a frozen clock, so the same code always draws the same
pictures: a diff in these files is a change in what users see.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ranktop.tui.app.console import RanktopApp  # noqa: E402
from ranktop.tui.cli.fleet_console import demo_fleet_app  # noqa: E402
from ranktop.tui.screens.rank import RankScreen  # noqa: E402
from ranktop.tui.settings.config import load_settings  # noqa: E402
from ranktop.tui.sources.demo import demo_source  # noqa: E402
from ranktop.tui.sources.demo_fleet import DemoFleet  # noqa: E402
from ranktop.widgets.log_view import LogView  # noqa: E402
from textual import constants  # noqa: E402

from tests.tui.terminal_svg import terminal_svg  # noqa: E402

START = 1_800_000_000.0

# (file, terminal size, seconds into the scenario, keys pressed before the picture)
SHOTS = [
    # a GPU thermally throttling (rank 37) while another rank straggles (rank 201)
    ("cluster-120x40.svg", (120, 40), 60.0, ["slash", *"37", "enter"]),
    # the four maps aggregated per node in a small pane
    ("cluster-80x24.svg", (80, 24), 60.0, ["slash", *"37", "enter"]),
    # one map full size in a small pane: every rank again
    ("cluster-80x24-temperature.svg", (80, 24), 60.0, ["2", "slash", *"37", "enter"]),
    # a rank has died: its cells are missing and the job has stopped making progress
    ("cluster-rank-down-120x40.svg", (120, 40), 200.0, []),
    # the straggler shows in compute time, not in step time
    ("cluster-compute-120x40.svg", (120, 40), 90.0, ["c", "slash", *"201", "enter"]),
    ("help-120x40.svg", (120, 40), 60.0, ["question_mark"]),
    # Enter on a cell: the rank the others are waiting for, its log tail and alerts
    ("rank-455-hang-120x40.svg", (120, 40), 216.0, ["slash", *"455", "enter", "enter"]),
    # after the fact: n selects rank 455's row, s shows the job as it was when it began
    ("cluster-at-moment-120x40.svg", (120, 40), 216.0, ["n", "s"]),
    # what to do: the dead rank's node to drain, the ECC GPU to reset, with their commands
    ("advice-120x40.svg", (120, 40), 200.0, ["a"]),
    # the evidence behind the hang verdict
    ("hang-evidence-120x40.svg", (120, 40), 216.0, ["e"]),
    # the throttling rank in a 16-colour terminal, and a rank down without colour
    ("cluster-16-colours-120x40.svg", (120, 40), 60.0, ["slash", *"37", "enter"], "standard"),
    ("cluster-no-color-120x40.svg", (120, 40), 200.0, [], "none"),
    # a rank down in a terminal whose locale is not UTF-8 (LANG=C): ASCII only
    ("cluster-ascii-120x40.svg", (120, 40), 200.0, [], "truecolor", True),
]
# The jobs list, as `ranktop` with no --job opens it (and q leads to it from the demo's job):
# (file, terminal size, seconds into the demo's scenario)
JOBS_SHOT = ("jobs-120x40.svg", (120, 40), 60.0)
# Each picture is in truecolor (the same as 256 colours) unless its shot names "standard"
# (16 colours) or "none" (NO_COLOR); in ASCII only where it says True.
LOGS = Path("/tmp/ranktop-screenshot-logs")  # a fixed place: its path shows on screen


class FrozenClock:
    """Wall-clock seconds that move only when set."""

    now = START

    def __call__(self) -> float:
        return self.now


async def shoot(name: str, size: tuple[int, int], at: float, keys: list[str],
                colours: str = "truecolor", ascii_only: bool = False) -> None:
    settings = load_settings()
    clock = FrozenClock()
    shutil.rmtree(LOGS, ignore_errors=True)
    source = demo_source(settings.demo, clock, started=START, log_root=LOGS)
    if colours == "none":
        os.environ["NO_COLOR"] = "1"  # read when the app is made
    constants.COLOR_SYSTEM = "truecolor" if colours == "none" else colours
    app = RanktopApp(settings, source, clock=clock, poll=False, ascii_only=ascii_only)
    os.environ.pop("NO_COLOR", None)
    async with app.run_test(size=size) as pilot:
        # Polls over the last 40 s, as a live session would have had them; each waits for
        # the hang triage it asked for, which the next poll shows.
        for offset in (-40.0, -30.0, -20.0, -10.0, 0.0):
            clock.now = START + at + offset
            await app.poll_once()
            await asyncio.to_thread(source.flush_logs)
            if app.engine.pipeline.triage is not None:
                await asyncio.to_thread(app.engine.pipeline.triage.wait, 30.0)
            await pilot.pause()
        await pilot.press(*keys)
        while app.wanted is not None:  # a past moment being replayed
            await pilot.pause(0.1)
        await logs_read(app, pilot)
        # in the colours the terminal is sent, which Textual's own screenshot does not show
        svg = terminal_svg(app, title=f"ranktop --demo ({size[0]}x{size[1]})")
    shutil.rmtree(LOGS, ignore_errors=True)
    (HERE / name).write_text(svg)
    print(f"wrote screenshots/{name}")


async def shoot_jobs(name: str, size: tuple[int, int], at: float) -> None:
    """The demo's fleet on the jobs list, its first refresh read."""
    settings = load_settings()
    clock = FrozenClock()
    clock.now = START + at
    demo = DemoFleet(settings.demo, START, clock)
    app = demo_fleet_app(settings, demo, lambda _opening: demo_source(settings.demo, clock,
                                                                      started=START),
                         clock=clock, opens=False)
    constants.COLOR_SYSTEM = "truecolor"
    async with app.run_test(size=size) as pilot:
        while not app.jobs.snapshot.rows:
            await pilot.pause(0.05)
        await pilot.pause(0.5)
        svg = terminal_svg(app, title=f"ranktop --demo, q: the jobs list ({size[0]}x{size[1]})")
    (HERE / name).write_text(svg)
    print(f"wrote screenshots/{name}")


async def logs_read(app: RanktopApp, pilot, deadline: float = 30.0) -> None:
    """A moment to settle, and on the rank screen until its workers have read the logs and
    the GPU model."""
    await pilot.pause(0.5)
    waited = 0.0
    while isinstance(app.screen, RankScreen) and not app.screen.query_one(LogView).lines:
        if waited >= deadline:
            raise SystemExit(f"the rank screen read no log line in {deadline:g} s")
        await pilot.pause(0.1)
        waited += 0.1
    asking = [w for w in app.screen.workers if w.group == "rank-gpu-model"]
    if asking:  # its GPU model, asked in a thread
        await app.screen.workers.wait_for_complete(asking)
    await pilot.pause()


def main() -> None:
    os.environ.pop("NO_COLOR", None)
    os.environ["XDG_CONFIG_HOME"] = str(HERE / "no-user-config")  # the shipped defaults only
    os.environ["TZ"] = "UTC"  # past moments are said in local time: the same pictures anywhere
    time.tzset()
    for shot in SHOTS:
        asyncio.run(shoot(*shot))
    asyncio.run(shoot_jobs(*JOBS_SHOT))


if __name__ == "__main__":
    main()
