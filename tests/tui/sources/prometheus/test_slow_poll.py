"""What a slow poll says: the query it waited on longest, and what the recording rules would
take out of it where Prometheus does not record the job's DCGM metrics by rank."""

from __future__ import annotations

import pytest
from ranktop.tui.core.model import QueryTime
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus import rules as prom_rules
from ranktop.tui.sources.prometheus.slow_poll import (
    RulesSaving,
    is_slow,
    rules_note,
    rules_saving,
    slow_words,
)


@pytest.fixture
def settings(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return load_settings(overrides={"prometheus": {"url": "http://prom:9090", "job": "j"}},
                         environ={})


def test_a_slow_poll_names_the_query_it_waited_on_longest_by_its_metric():
    words = slow_words(20.3, QueryTime("metric:sm_active", 12.14, 2_900_000))
    assert words == "slow: the poll took 20.3 s, 12.1 s of it waiting on sm_active"
    assert slow_words(9.0, QueryTime("job:step", 6.0)).endswith("6.0 s of it waiting on "
                                                                  "the job's step")


def test_a_slowest_query_of_no_time_is_not_named():
    assert slow_words(20.3, None) == "slow: the poll took 20.3 s"
    assert slow_words(20.3, QueryTime("metric:sm_active", 0.0)) == "slow: the poll took 20.3 s"


def test_a_poll_is_slow_past_5_s_or_a_refresh_where_that_is_longer():
    assert is_slow(5.5, refresh=2.0) and not is_slow(4.9, refresh=2.0)
    assert not is_slow(8.0, refresh=10.0) and is_slow(10.5, refresh=10.0)


def test_the_rules_would_take_the_join_out_of_each_dcgm_query_but_the_rank_maps(settings):
    dcgm = prom_rules.dcgm_metrics(settings)
    waited = {f"metric:{m}": 2.0 for m in dcgm}
    waited.update({"metric:sm_active": 12.0, "metric:step_time": 30.0, "job:step": 30.0})
    saving = rules_saving(settings, frozenset(), waited)
    # the temperature query learns the rank map: it keeps its join whatever is recorded
    assert "temperature" in dcgm and "sm_active" in dcgm and "step_time" not in dcgm
    assert saving == RulesSaving(len(dcgm) - 1, 12.0 + 2.0 * (len(dcgm) - 2))


def test_the_rules_take_out_only_what_prometheus_does_not_record_yet(settings):
    dcgm = prom_rules.dcgm_metrics(settings)
    waited = {f"metric:{m}": 2.0 for m in dcgm}
    assert rules_saving(settings, frozenset(dcgm), waited) is None
    all_but_sm = frozenset(m for m in dcgm if m != "sm_active")
    assert rules_saving(settings, all_but_sm, waited) == RulesSaving(1, 2.0)
    assert rules_saving(settings, frozenset(), {}) is None  # nothing asked: nothing to save


def test_the_note_says_how_many_queries_and_their_seconds_in_all():
    assert rules_note(RulesSaving(7, 14.23)) == (
        "no recording rules in Prometheus: `ranktop rules` would take the DCGM join out of "
        "7 queries (their answers took 14.2 s in all this poll)")
    assert "out of 1 query (" in rules_note(RulesSaving(1, 3.0))
