"""What a label names is the whole value: host names past the screen's width stay apart
(cut on screen only), and a host holding a control character is shown plain but asked
about as its label holds it."""

from __future__ import annotations

import contextlib
import json

from ranktop.tui.core.model import SHOWN_HOST_CHARS
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.client import QueryError
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.tui.scripted_http import Scripted


def job_answer(hosts: list[str]) -> str:
    """Every query answered with the job's step series, one rank a host."""
    result = [{"metric": {"rank": str(rank), "hostname": host, "local_rank": "0",
                          "Hostname": host, "gpu": "0"}, "value": [1.0, "1"]}
              for rank, host in enumerate(hosts)]
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}})


def polled(url: str, hosts: list[str]) -> PrometheusSource:
    Scripted.reply = (200, "application/json", job_answer(hosts))
    source = PrometheusSource(load_settings(overrides={"prometheus": {"url": url}}, environ={}))
    source.poll_now()
    return source


def test_sixteen_long_host_names_stay_sixteen_nodes(server):
    hosts = [f"{'n' * 290}-{i:02d}" for i in range(16)]  # alike for their first 290 characters
    source = polled(server, hosts)
    assert source.rank_map.hosts == tuple(hosts)
    assert [r.host for r in source.rank_map.ranks] == hosts
    place = source.rank_map.ranks[3].place
    assert len(place) < SHOWN_HOST_CHARS + 20 and place.startswith("n" * 200)


def test_host_names_past_any_bound_still_stay_apart(server):
    hosts = [f"{'n' * 50_000}-{i:02d}" for i in range(4)]
    source = polled(server, hosts)
    assert len(set(source.rank_map.hosts)) == 4
    assert all(len(host) < 1200 for host in source.rank_map.hosts)


def test_a_control_character_is_shown_plain_and_sent_as_it_came(server):
    source = polled(server, ["gpu\x01-a", "gpu-b"])
    rank = source.rank_map.ranks[0]
    assert rank.host == "gpu\ufffd-a" and "\ufffd" in rank.place
    Scripted.queries.clear()
    with contextlib.suppress(QueryError):  # a vector where a range was asked: sent, though
        source.backfill(0, ["temperature"], 60, 15)
    asked = " ".join(Scripted.queries)
    assert '"gpu\\u0001-a"' in asked and "\ufffd" not in asked
