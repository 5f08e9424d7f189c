"""A poll reads a bounded number of bytes, counted after decompression: a gzip bomb is
stopped where the poll's budget ends, the queries after it are not sent and the status says
so, and a failed query's body is not kept alive by its error."""

from __future__ import annotations

import gc
import gzip
import time
import tracemalloc

import pytest
from ranktop.tui.core.model import Health, RankMap
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.bounded_body import ByteBudget
from ranktop.tui.sources.prometheus import batch as prom_batch
from ranktop.tui.sources.prometheus import client as prom_client
from ranktop.tui.sources.prometheus import source as prometheus
from ranktop.tui.sources.prometheus.client import PromClient, QueryError
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.tui.scripted_http import Scripted

MB = 1_000_000
BOMB = gzip.compress(b" " * (64 * MB), compresslevel=9)  # 64 MB of JSON whitespace, ~62 KB


@pytest.fixture
def small_bounds(monkeypatch):
    """Bounds a test can pass quickly: 8 MB an answer, 20 MB a poll."""
    monkeypatch.setattr(prom_client, "MAX_BODY_BYTES", 8 * MB)
    monkeypatch.setattr(prometheus, "POLL_BYTES", 20 * MB)


def answering(body: bytes | str, gzipped: bool = False) -> None:
    Scripted.reply = (200, "application/json", body)
    Scripted.headers = {"Content-Encoding": "gzip"} if gzipped else {}


def source(url: str) -> PrometheusSource:
    return PrometheusSource(load_settings(overrides={"prometheus": {"url": url}}, environ={}))


def traced_peak(call) -> int:
    """The most memory Python held while ``call`` ran (bytes above where it started)."""
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


def test_a_gzip_bomb_is_stopped_where_the_budget_ends(server):
    answering(BOMB, gzipped=True)
    client = PromClient(load_settings(overrides={"prometheus": {"url": server}},
                                      environ={}).prometheus)
    budget = ByteBudget(4 * MB)
    caught: list[QueryError] = []

    def ask() -> None:
        with pytest.raises(QueryError) as error:
            client.query("up", budget)
        caught.append(error.value)

    peak = traced_peak(ask)
    assert caught[0].kind == "too large" and "4 MB" in str(caught[0])
    assert budget.spent
    assert peak < 12 * MB  # a few megabytes past the budget at most, never the 64 MB


def test_once_the_polls_budget_is_spent_no_more_queries_are_sent(server, small_bounds):
    answering(BOMB, gzipped=True)
    polled = source(server)
    with pytest.raises(QueryError) as caught:
        polled.poll_now()
    queries = len(polled.queries())
    # 8 + 8 + 4 MB, and those already on their way, then nothing more asked
    assert Scripted.requests <= 2 + prom_batch.CONCURRENT < queries
    assert caught.value.kind == "too large"
    assert "this poll's answers passed 20 MB" in str(caught.value)
    assert f"{queries - Scripted.requests} more queries not sent" in str(caught.value)
    assert polled.status().health is Health.ERROR
    assert "more queries not sent" in polled.status().message


def test_failed_queries_do_not_keep_their_bodies(server, small_bounds, monkeypatch):
    """Every answer is 3 MB of garbage that fails to decode: a poll holds only those in
    flight at once."""
    monkeypatch.setattr(prometheus, "POLL_BYTES", 500 * MB)
    answering("x" * (3 * MB))
    polled = source(server)

    def poll() -> None:
        with pytest.raises(QueryError):
            polled.poll_now()

    peak = traced_peak(poll)
    assert Scripted.requests == len(polled.queries())
    # the answers in flight at once, a few copies of each while it is read; all of them kept
    # would be 3 MB x the number of queries
    assert peak < prom_batch.CONCURRENT * 8 * MB < len(polled.queries()) * 3 * MB


def test_a_past_moments_range_queries_share_its_budget(server, small_bounds):
    """A gzip bomb answering every range query: a past moment reads within one poll's
    budget as a live poll does, and sends nothing more once it is spent."""
    answering(BOMB, gzipped=True)
    polled = source(server)
    polled.rank_map = RankMap.grid(["node-0"], 4, "the job's labels")  # chunks of moments
    moments = [round(time.time()) - 100.0 + 2 * i for i in range(5)]
    with pytest.raises(QueryError) as caught:
        list(polled.frames_at(moments))
    assert caught.value.kind == "too large"
    assert "this poll's answers passed 20 MB" in str(caught.value)
    assert Scripted.requests <= 2 + prom_batch.CONCURRENT < len(polled.queries())
