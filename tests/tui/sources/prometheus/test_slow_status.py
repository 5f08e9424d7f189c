"""A slow poll's status names the query it waited on longest."""

from __future__ import annotations

import threading

import pytest
from ranktop.tui.core.model import Health
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus import rules as prom_rules
from ranktop.tui.sources.prometheus.client import Vector
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.tui.sources.prometheus.test_source import NOW, ScriptedClient, healthy

SM_ACTIVE_SECONDS = 12.0
DCGM_SECONDS = 1.0  # each other DCGM metric's
ANSWER_BYTES = 2_900_000


class SlowClient(ScriptedClient):
    """The scripted answers, each after a delay on its sender's own clock (so each query's
    time is its own whatever the others do meanwhile); the poll's thread sees the delays
    add up, as if the queries were sent one by one."""

    def __init__(self, delays: dict[str, float]) -> None:
        super().__init__()
        self.delays = delays
        self.senders = threading.local()
        self.poller = threading.current_thread()
        self.spent = 0.0
        self.adding = threading.Lock()

    def clock(self) -> float:
        if threading.current_thread() is self.poller:
            return NOW + self.spent
        return getattr(self.senders, "now", NOW)

    def query(self, expression: str, budget: object = None, at: float | None = None
              ) -> Vector:
        keys = {expr: key for key, expr in self.source.queries().items()} if self.source else {}
        delay = self.delays.get(keys.get(expression, ""), 0.0)
        self.senders.now = self.clock() + delay
        with self.adding:
            self.spent += delay
        answer = super().query(expression, budget, at)
        answer.size = ANSWER_BYTES if delay else 0
        return answer


def slow_source(tmp_path, monkeypatch, delays: dict[str, float]) -> PrometheusSource:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    settings = load_settings(overrides={"prometheus": {"url": "http://prom:9090", "job": "j"}},
                             environ={})
    client = SlowClient(delays)
    made = PrometheusSource(settings, client=client, clock=client.clock)
    client.source = made
    client.answers.update(healthy())
    return made


@pytest.fixture
def dcgm_ids(tmp_path, monkeypatch) -> list[str]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return prom_rules.dcgm_metrics(load_settings(environ={}))


@pytest.fixture
def slow(tmp_path, monkeypatch, dcgm_ids) -> PrometheusSource:
    """A source whose DCGM queries take a second each, sm_active's 12 s."""
    delays = {f"metric:{m}": DCGM_SECONDS for m in dcgm_ids}
    delays["metric:sm_active"] = SM_ACTIVE_SECONDS
    return slow_source(tmp_path, monkeypatch, delays)


def test_a_slow_poll_names_the_query_it_waited_on_longest(slow):
    slow.poll_now()
    status = slow.status()
    took = status.poll_seconds
    assert status.health is Health.SLOW and took > SM_ACTIVE_SECONDS
    assert status.message == (f"slow: the poll took {took:.1f} s, 12.0 s of it waiting on "
                              "sm_active")
    assert status.slowest is not None
    assert (status.slowest.key, status.slowest.seconds, status.slowest.size) == (
        "metric:sm_active", SM_ACTIVE_SECONDS, ANSWER_BYTES)


def test_a_quick_poll_is_ok_and_still_knows_its_slowest_query(tmp_path, monkeypatch):
    quick = slow_source(tmp_path, monkeypatch, {"metric:sm_active": 0.5})
    quick.poll_now()
    status = quick.status()
    assert status.health is Health.OK and status.message == ""
    assert status.slowest is not None and status.slowest.key == "metric:sm_active"

