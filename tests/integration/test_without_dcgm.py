"""A job without DCGM (`ranktop simulate --no-dcgm`: the job's own series only, as a CPU job
under gloo writes them) behind a real Prometheus: its ranks are named by their local rank,
its GPU maps fold away once they have had no series for the hold, and the screen says so
once."""

from __future__ import annotations

import asyncio
import time

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.core.gpu_data import FOLD_AFTER_SECONDS
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.source import PrometheusSource
from ranktop.widgets.panel import MetricPanel

from tests.integration.cluster import HERE, Prometheus, Simulator
from tests.tui.conftest import screen_text

JOB = "integration-faults"
RANKS = 16  # two nodes of eight
FOLDED = ("no GPU metrics (DCGM) for this job: SM activity, GPU temperature, NVLink "
          "bandwidth not shown")


async def test_a_job_without_dcgm_is_named_by_local_rank_and_its_gpu_maps_fold(tmp_path):
    simulator = Simulator(HERE / "scenario-faults.toml", seed=5, nodes=2, extra=("--no-dcgm",))
    server = Prometheus(tmp_path, [simulator.port])
    try:
        server.wait_for_series(f'count(training_step_seconds{{training_job="{JOB}"}})', RANKS)
        settings = load_settings(overrides={"prometheus": {"url": server.url, "job": JOB}},
                                 environ={})
        app = RanktopApp(settings, PrometheusSource(settings), poll=False)
        async with app.run_test(size=(120, 40)) as pilot:
            deadline = time.monotonic() + FOLD_AFTER_SECONDS + 30
            while FOLDED not in screen_text(app) and time.monotonic() < deadline:
                await app.poll_once()
                await pilot.pause()
                await pilot.pause()
                await asyncio.sleep(1.0)  # the fold waits FOLD_AFTER_SECONDS of the job
            text = screen_text(app)
            assert text.count(FOLDED) == 1
            assert f"ranks {RANKS}/{RANKS} up" in text
            assert "rank 0 gpu-node-000 local rank 0" in text and "GPU 0" not in text
            shown = [app.screen.query_one(f"#map-{i}", MetricPanel).display for i in range(4)]
            assert shown == [False, False, False, True]
            assert "Step time" in text and "not exported —" not in text
    finally:
        server.stop()
        simulator.stop()
