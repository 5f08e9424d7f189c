"""A slow poll's status names the query it waited on longest, and where Prometheus has no
recording rules for the job, says what they would take out of it; the header points at them."""

from __future__ import annotations

import threading

import pytest
from ranktop.tui.core.model import Health
from ranktop.tui.screens.cluster_lines import JobView, header
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus import rules as prom_rules
from ranktop.tui.sources.prometheus.client import Sample, Vector
from ranktop.tui.sources.prometheus.source import PrometheusSource
from rich.style import Style

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


def test_without_the_rules_a_slow_poll_says_what_they_would_take_out_of_it(slow, dcgm_ids):
    slow.poll_now()
    replaced = [m for m in dcgm_ids if m != "temperature"]  # the rank map's keeps its join
    seconds = SM_ACTIVE_SECONDS + DCGM_SECONDS * (len(replaced) - 1)
    assert (f"`ranktop rules` would take the DCGM join out of {len(replaced)} queries (their "
            f"answers took {seconds:.1f} s in all this poll)") in slow.status().detail


def test_with_the_rules_present_a_slow_poll_says_nothing_of_them(slow, dcgm_ids):
    slow.client.answers["recorded"] = [
        Sample({"__name__": prom_rules.recorded_name(m)}, 4, NOW) for m in dcgm_ids]
    slow.poll_now()  # learns that Prometheus records them: the next poll reads them
    slow.poll_now()
    status = slow.status()
    assert status.health is Health.SLOW and "waiting on sm_active" in status.message
    assert "ranktop rules" not in status.detail


def test_a_quick_poll_says_nothing_of_the_rules(tmp_path, monkeypatch):
    quick = slow_source(tmp_path, monkeypatch, {"metric:sm_active": 0.5})
    quick.poll_now()
    status = quick.status()
    assert status.health is Health.OK and status.message == ""
    assert "ranktop rules" not in status.detail
    assert status.slowest is not None and status.slowest.key == "metric:sm_active"


def test_the_header_says_the_slowest_query_and_points_at_the_rules_within_120_columns(slow):
    frame = slow.poll_now()
    view = JobView("llama-70b", slow.status(), frame, 4, 4, now=frame.time + 14.0,
                   paused=False, pause_key="p", step_stuck_since=None, refresh_seconds=2.0)
    line_1, line_2 = header(view, lambda role: Style()).plain.splitlines()
    assert "waiting on sm_active" in line_1[:120] and "data 14.0 s old" in line_1[:120]
    assert "→ ranktop rules" in line_2[:120]
    assert "DCGM join" not in line_1 + line_2  # the saving: in the help screen



def test_a_clock_that_stands_still_times_no_query(tmp_path, monkeypatch):
    still = slow_source(tmp_path, monkeypatch, {})  # a past moment's clock: the moment's
    still.poll_now()
    assert still.status().slowest is None
