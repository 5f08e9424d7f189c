"""Against a real Prometheus the footer of keys is there from the first frame (it once stayed
empty until a dialog came and went: the screen announced its keys before the footer could
hear)."""

from __future__ import annotations

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.source import PrometheusSource
from ranktop.widgets.key_footer import KeyFooter

from tests.integration.cluster import HERE, Prometheus, Simulator
from tests.tui.conftest import screen_text

JOB = "integration-death"


async def test_the_footer_shows_its_keys_from_the_first_frame(tmp_path) -> None:
    simulator = Simulator(HERE / "scenario-death.toml", seed=3, nodes=2)
    server = Prometheus(tmp_path, [simulator.port])
    try:
        server.wait_for_series(f'count(training_step_seconds{{training_job="{JOB}"}})', 15)
        settings = load_settings(overrides={"prometheus": {"url": server.url, "job": JOB}},
                                 environ={})
        app = RanktopApp(settings, PrometheusSource(settings), poll=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await app.poll_once()
            await pilot.pause()
            await pilot.pause()
            footer = app.screen.query_one(KeyFooter)
            assert footer.children, "the footer shows no key"
            last = screen_text(app).splitlines()[-1]
            assert "Help" in last and "Quit" in last
    finally:
        server.stop()
        simulator.stop()
