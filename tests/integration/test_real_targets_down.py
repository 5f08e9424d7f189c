"""The header against the backend, on the real job's recorded death: once the agents tore
the group down, `up` was 0 for all eight scrape targets, and the source's status says so,
never the "every scrape target is up" it had said while they were."""

from __future__ import annotations

from pathlib import Path

from ranktop.tui.core.model import Health
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.client import PromClient
from ranktop.tui.sources.prometheus.past import RangeClient
from ranktop.tui.sources.prometheus.source import PrometheusSource

from bench.realjob.replay import replayed

DEATH = Path(__file__).resolve().parents[1] / "recordings" / "death"


class PinnedClient(RangeClient):
    """Every instant query asked at the moment set with ``at``, as a live poll then."""

    def metric_names(self, since: float) -> list[str]:
        return self.client.metric_names(since)

    def label_names(self, metric: str, since: float) -> list[str]:
        return self.client.label_names(metric, since)

    def targets(self, budget: object = None, scrape_pool: str = "") -> dict:
        """The scrape targets as they were then are not known now: none."""
        return {"activeTargets": []}


def test_a_live_poll_after_the_death_says_every_target_is_down(tmp_path):
    with replayed(DEATH, tmp_path) as replay:
        died = replay.truth["at"]
        settings = load_settings(overrides={"prometheus": {
            "url": replay.url, "job": replay.truth["job"]}}, environ={})
        client = PinnedClient(PromClient(settings.prometheus))
        source = PrometheusSource(settings, client, client.now)
        said = []
        for moment in (died - 10, died - 8, died + 5, died + 7):  # 2 s apart, as polls
            client.at(moment)
            source.poll_now()
            said.append(source.status())
    assert [s.health for s in said] == [Health.OK, Health.OK, Health.ERROR, Health.ERROR]
    for status in said[2:]:
        assert status.message.endswith('scrape targets down (up == 0): "realjob" 8 of 8')
        assert "every scrape target is up" not in status.message
