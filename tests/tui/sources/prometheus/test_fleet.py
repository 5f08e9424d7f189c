"""The jobs list's queries: a fixed number per refresh whatever the number of jobs, job ids
through the label-values API, each answer read into its job's facts."""

from __future__ import annotations

import pytest
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.client import Vector
from ranktop.tui.sources.prometheus.fleet import (
    RECORD_PREFIX,
    FleetReader,
    facts_of,
    fleet_rules_yaml,
    raw_queries,
    recorded_queries,
)


class FakeFleet:
    """A backend holding ``jobs`` jobs of 8 ranks each: answers every query by its figure,
    and counts what was asked."""

    def __init__(self, jobs: int, rules: bool = False) -> None:
        self.names = [f"job-{i:04d}" for i in range(jobs)]
        self.rules = rules
        self.queries: list[str] = []
        self.label_calls: list[tuple[str, str]] = []
        self.closed = False

    def close(self) -> None:
        self.closed = True

    def label_values(self, label: str, metric: str, since: float) -> list[str]:
        self.label_calls.append((label, metric))
        return list(self.names)

    def query(self, expression: str, budget=None, at=None) -> Vector:
        self.queries.append(expression)
        if expression.startswith("count(ranktop:fleet:"):
            return Vector([{"metric": {}, "value": [0, "1"]}] if self.rules else [])
        result = []
        for index, name in enumerate(self.names):
            value, labels = self._figure(expression, index)
            if value is not None:
                result.append({"metric": {"training_job": name, **labels},
                               "value": [0, str(value)]})
        return Vector(result)

    @staticmethod
    def _figure(expression: str, index: int):
        if "ALERTS" in expression:
            return (1, {"severity": "critical"}) if index == 1 else (None, {})
        if "changes(" in expression and "timestamp" not in expression \
                and "bool" not in expression:
            return 0 if index == 2 else 30, {}
        if expression.startswith("count by (training_job, user, owner)") \
                or expression == f"{RECORD_PREFIX}up":
            return (7 if index == 3 else 8), {"user": "ana"}
        if "offset" in expression or expression == f"{RECORD_PREFIX}old":
            return 1, {}
        if "last_over_time" in expression or expression == f"{RECORD_PREFIX}seen":
            return 8, {}
        return None, {}


def _reader(backend: FakeFleet) -> FleetReader:
    settings = load_settings(environ={})
    return FleetReader(settings, client=backend, clock=lambda: 1e6)


@pytest.mark.parametrize("rules", [False, True])
def test_a_refresh_asks_the_same_queries_for_two_jobs_as_for_a_thousand(rules):
    asked = {}
    for jobs in (2, 1000):
        backend = FakeFleet(jobs, rules)
        read = _reader(backend).read()
        assert len(read.jobs) == jobs
        asked[jobs] = backend.queries
        assert backend.label_calls == [("training_job", "training_step_seconds")]
        assert read.recorded is rules
    assert asked[2] == asked[1000]
    assert not any("job-0" in expression for expression in asked[2])


def test_each_answer_lands_on_its_job():
    read = _reader(FakeFleet(4)).read()
    facts = {f.name: f for f in read.jobs}
    assert facts["job-0001"].alerts == {"critical": 1}
    assert facts["job-0002"].steps == 0 and facts["job-0000"].steps == 30
    assert (facts["job-0003"].ranks_up, facts["job-0003"].ranks_expected) == (7, 8)
    assert facts["job-0000"].owner == "ana"
    assert read.errors == {}


def test_recorded_figures_are_the_raw_ones_by_name():
    settings = load_settings(environ={})
    reader = FleetReader(settings, client=FakeFleet(1))
    raw, recorded = raw_queries(reader.names), recorded_queries(reader.names)
    assert set(raw) <= set(recorded)
    assert all(recorded[key] == f"{RECORD_PREFIX}{key}" for key in raw)
    rules = fleet_rules_yaml(settings)
    assert rules.count("- record: ranktop:fleet:") == len(raw)


def test_a_job_label_promql_cannot_hold_is_refused():
    settings = load_settings(overrides={"ranks": {"job_label": 'job"} or vector(1) #'}},
                             environ={})
    with pytest.raises(ValueError):
        fleet_rules_yaml(settings)


def test_a_host_serving_several_jobs_is_said_in_each_of_their_facts():
    settings = load_settings(environ={})
    names = FleetReader(settings, client=FakeFleet(1)).names
    query = raw_queries(names)["shared"]
    assert "count by (hostname)" in query and "> 1" in query and "job-" not in query
    pairs = [("a", "gpu-node-009"), ("b", "gpu-node-009"), ("c", "gpu-node-009"),
             ("a", "gpu-node-010"), ("d", "")]
    answer = Vector([{"metric": {"training_job": job, "hostname": host}, "value": [0, "1"]}
                     for job, host in pairs])
    facts = {f.name: f for f in facts_of("training_job", ["a", "b", "c", "d", "e"],
                                         {"shared": answer}, "hostname")}
    assert facts["a"].shared == {"gpu-node-009": ("b", "c")}  # alone on gpu-node-010
    assert facts["b"].shared == {"gpu-node-009": ("a", "c")}
    assert facts["d"].shared == {} and facts["e"].shared == {}

