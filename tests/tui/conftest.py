"""A demo app on a fixed clock, and a way to read the screen as text."""

from __future__ import annotations

import asyncio
import math
from dataclasses import replace
from functools import partial

import pytest
from ranktop.tui.app.bundling import shown_text
from ranktop.tui.app.console import RanktopApp
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.log_writer import LogWriter
from ranktop.tui.sources.demo import DemoSource, demo_source
from textual import constants

from tests.tui.scripted_http import server  # noqa: F401 - a fixture for the client tests
from tests.tui.terminal_svg import terminal_svg

START = 1_800_000_000.0
GPU_METRICS = frozenset(m.id for m in load_settings().metrics.values() if m.from_gpu)


class FakeClock:
    """Wall-clock seconds that only move when a test moves them."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class CpuCluster(SimCluster):
    """The demo's job (64 nodes of 8) with the job's own series only until ``gpus_from``
    seconds (never, by default): a CPU job, or GPUs nobody exports, until then."""

    def __init__(self, gpus_from: float = math.inf) -> None:
        super().__init__(64, 8, seed=7)
        self.gpus_from = gpus_from

    def frame_at(self, t: float):
        frame = super().frame_at(t)
        if t >= self.gpus_from:
            return frame
        return replace(frame, values={metric: values for metric, values in frame.values.items()
                                      if metric not in GPU_METRICS})


def make_app(at: float = 20.0, nodes: int = 64, gpus: int = 8, log_root=None,
             event_log=None, color_system: str = "truecolor",
             cluster: SimCluster | None = None, ascii_only: bool = False) -> RanktopApp:
    """The demo at ``at`` seconds into its scenario, with polls driven by the test; with
    ``log_root`` its ranks write their log files there; ``cluster``: a simulated job of the
    test's own instead of the shipped scenario. Its colour system is fixed (the terminal
    running the tests would choose otherwise), and its screenshots show that colour
    system's colours; ``ascii_only``: drawn as for a locale that is not UTF-8."""
    clock = FakeClock(START + at)
    if cluster is None:
        source = demo_source(DemoSettings(nodes, gpus, seed=7), clock, started=START,
                             log_root=log_root)
    else:
        writer = LogWriter(cluster, log_root, seed=7, epoch=START) if log_root else None
        source = DemoSource(cluster, clock, START, writer)
    saved = constants.COLOR_SYSTEM
    constants.COLOR_SYSTEM = color_system  # read when the app makes its console
    try:
        app = RanktopApp(load_settings(), source, clock=clock, poll=False,
                         event_log=event_log, ascii_only=ascii_only)
    finally:
        constants.COLOR_SYSTEM = saved
    app.export_screenshot = partial(terminal_svg, app)
    return app


async def triage_done(app: RanktopApp, seconds: float = 60.0) -> None:
    """Wait for the hang triage the last poll asked for (a thread of its own, slow on a busy
    machine), so the next poll shows its verdict as a quiet machine's would."""
    triage = app.engine.pipeline.triage
    if triage is not None:
        assert await asyncio.to_thread(triage.wait, seconds), "the triage never finished"


def polled(app: RanktopApp, analysis, levels=None):
    """``analysis`` as the app's next live poll would bring it (its maps' ``levels`` planned
    by the engine, if given): for ``app.cluster.show``."""
    return replace(app.live, analysis=analysis, version=app.live.version + 1,
                   levels=levels or {})


def screen_text(app: RanktopApp) -> str:
    """What the terminal shows, one line per row (as a bundle saves it)."""
    return shown_text(app)


@pytest.fixture(autouse=True)
def isolated_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("NO_COLOR", raising=False)
