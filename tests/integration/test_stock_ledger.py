"""Stock dcgm-exporter counters hide an uncorrectable memory error everywhere but in the
remapped rows: the whole path (simulator --profile stock -> real Prometheus -> analysis ->
the rank screen) must still name it."""

from __future__ import annotations

import asyncio
import time

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.exporter import ExportOptions
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.integration.cluster import HERE, Prometheus, SkippingSimulator
from tests.tui.conftest import screen_text

JOB = "integration-stock-ecc"
BEFORE_THE_FAULT = 53.0  # the scenario's ECC error comes at 55 s


async def test_a_remapped_row_under_stock_counters_is_a_memory_fault_on_screen(tmp_path):
    simulator = SkippingSimulator(HERE / "scenario-stock-ecc.toml", seed=12, nodes=2,
                                  options=ExportOptions(profile="stock"))
    server = Prometheus(tmp_path, [simulator.port])
    try:
        server.wait_for_series(f'count(training_step_seconds{{training_job="{JOB}"}})', 16)
        settings = load_settings(overrides={"prometheus": {"url": server.url, "job": JOB}},
                                 environ={})
        source = PrometheusSource(settings)
        app = RanktopApp(settings, source, poll=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await app.poll_once()  # the baseline, taken before the fault
            await pilot.pause()
            await pilot.pause()
            assert app.analysis.frame.values["remapped_rows"][5] == 0
            simulator.skip_to(BEFORE_THE_FAULT)
            deadline = time.monotonic() + 45
            memory = []
            while time.monotonic() < deadline and not memory:
                await app.poll_once()
                await pilot.pause()
                memory = [a for a in app.analysis.anomalies if a.kind == "memory"]
                await asyncio.sleep(1.0)
            assert [(a.rank, a.severity, a.confirmed) for a in memory] == [(5, "critical", True)]
            assert "ecc_dbe" not in app.analysis.frame.values  # stock: no DBE counter at all
            assert not any(a.kind == "ecc" for a in app.analysis.anomalies)
            assert "memory: row(s) remapped +1 in the last 10 min" in screen_text(app)
            app.open_rank(5)
            await pilot.pause()
            await pilot.pause()
            # the rank screen says it once: as its anomaly, with no ledger line repeating it
            shown = screen_text(app)
            assert "memory: row(s) remapped +1" in shown and shown.count("remapped +1") == 1
    finally:
        server.stop()
        simulator.stop()

