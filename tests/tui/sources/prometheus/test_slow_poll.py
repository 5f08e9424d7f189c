"""What a slow poll says: how long it took and the query it waited on longest."""

from __future__ import annotations

from ranktop.tui.core.model import QueryTime
from ranktop.tui.sources.prometheus.slow_poll import is_slow, slow_words


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

