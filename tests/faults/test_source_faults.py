"""Each fault of the proxy against the Prometheus source: what the header would say, within
one poll, and recovery without a restart once the fault clears."""

from __future__ import annotations

import math

import pytest
from ranktop.tui.core.model import SHOWN_HOST_CHARS, Health
from ranktop.tui.sources.prometheus import batch as prom_batch
from ranktop.tui.sources.prometheus.client import QueryError
from ranktop.tui.sources.prometheus.decode import LABEL_VALUE_CHARS
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.faults.conftest import RANKS, settings_for
from tests.faults.proxy import TERMINAL_ESCAPES, FaultProxy

# fault -> what the status message must name
FAILING = {
    "delay-10": "timed out", "delay-60": "timed out", "hang": "timed out",
    "slowloris": "timed out", "header-trickle": "timed out", "http-500": "HTTP 500",
    "http-502": "HTTP 502", "http-503": "HTTP 503", "http-401": "HTTP 401", "http-403": "HTTP 403",
    "http-404": "HTTP 404", "http-429": "HTTP 429", "truncated": "bad answer",
    "reset": "request failed", "html": "bad answer", "empty": "bad answer",
    "status-error": "query failed: query processing would load too many samples",
    "garbage": "bad answer", "scalar": "bad answer", "string": "bad answer",
}


def poll(source: PrometheusSource):
    try:
        return source.poll_now()
    except QueryError:
        return None


@pytest.fixture(scope="module")
def shared(upstream):
    """One proxy and one source for the module: each test starts from the healthy state
    the one before it recovered to."""
    proxy = FaultProxy(upstream.url)
    made = PrometheusSource(settings_for(proxy.url, timeout=1.0))
    yield proxy, made
    made.client.close()
    proxy.stop()


@pytest.fixture
def proxy(shared):
    shared[0].set("pass")
    yield shared[0]
    shared[0].set("pass")


@pytest.fixture
def source(shared, proxy):
    made = shared[1]
    if made.status().health is not Health.OK:
        assert poll(made) is not None and made.status().health is Health.OK
    assert len(made.rank_map) == RANKS
    return made


@pytest.mark.parametrize("fault", sorted(FAILING))
def test_a_fault_is_named_at_the_first_poll_and_clears_at_the_next(proxy, source, fault):
    proxy.set(fault)
    assert poll(source) is None
    status = source.status()
    assert status.health is Health.STALE  # the last good frame stays, marked stale
    assert FAILING[fault] in status.message
    proxy.set("pass")
    frame = poll(source)
    assert frame is not None and source.status().health is Health.OK
    assert sum(not math.isnan(frame.value("temperature", r)) for r in range(RANKS)) == RANKS


@pytest.mark.parametrize("fault", ["nan", "inf", "minus-inf", "huge-number"])
def test_no_number_is_no_data_never_a_value(proxy, source, fault):
    proxy.set(fault)
    frame = poll(source)
    assert frame is not None
    assert all(math.isnan(frame.value("temperature", r)) for r in range(RANKS))


def test_a_number_where_a_string_belongs_is_read(proxy, source):
    proxy.set("number")
    frame = poll(source)
    assert frame is not None and frame.value("temperature", 0) == 12


def test_flapping_series_keep_every_rank_in_the_map(proxy, source):
    proxy.set("flap")
    for _ in range(2):
        poll(source)
        assert len(source.rank_map) == RANKS  # a rank whose series vanish keeps its place


def test_a_flood_of_ranks_in_one_answer_leaves_no_rank_behind(proxy, source):
    proxy.set("flood")
    poll(source)
    proxy.set("pass")
    frame = poll(source)
    assert len(source.rank_map) == RANKS  # no rank 32..1055 "missing" from then on
    assert all(frame.ranks_up(RANKS)) and "flood" not in "".join(source.rank_map.hosts)


def test_terminal_escapes_in_host_labels_never_leave_the_client(proxy, source):
    proxy.set("escapes")
    poll(source)
    rank = source.rank_map.ranks[0]
    for sequence in TERMINAL_ESCAPES.values():
        assert sequence not in rank.host
    assert not any(c in rank.host for c in "\x1b\x07\x9b\x9d\x9c\x00\u202e")


def test_a_megabyte_label_is_cut(proxy, source):
    proxy.set("megabyte-label")
    poll(source)
    assert all(len(r.host) < LABEL_VALUE_CHARS + 60 for r in source.rank_map.ranks)  # and a note
    assert all(len(r.place) < SHOWN_HOST_CHARS + 30 for r in source.rank_map.ranks)


def test_429_and_503_stop_the_poll_and_keep_retry_after(proxy, source):
    for fault in ("http-429", "http-503"):
        proxy.set(fault)
        before = proxy.requests
        poll(source)
        # the rest of the poll's queries are not sent: only those already on their way
        assert proxy.requests - before <= prom_batch.CONCURRENT
        assert source.retry_after == 2.0
    proxy.set("pass")
    poll(source)
    assert source.retry_after is None
