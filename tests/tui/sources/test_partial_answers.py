"""The partial answers of distributed backends (fixtures/, in each backend's documented shape)
read by the client: every series that came, the backend's warnings kept beside them."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.client import PromClient
from ranktop.tui.sources.prometheus.decode import PARTIAL_FLAG
from ranktop.tui.sources.prometheus.status import short_reason

from tests.tui.scripted_http import Scripted

FIXTURES = Path(__file__).resolve().parent / "fixtures"
INSTANT = ("prometheus-remote-read-partial.json", "victoriametrics-cluster-partial.json",
           "victoriametrics-cluster-whole.json", "thanos-partial-warnings.json",
           "prometheus3-infos.json")
DOWNSAMPLED = 300.0  # Thanos's 5-minute resolution


def recorded(name: str) -> tuple[str, dict]:
    text = (FIXTURES / name).read_text()
    return text, json.loads(text)


def client(url: str) -> PromClient:
    return PromClient(load_settings(overrides={"prometheus": {"url": url}},
                                    environ={}).prometheus)


@pytest.mark.parametrize("name", INSTANT)
def test_every_series_of_an_answer_is_read(server, name):
    text, answer = recorded(name)
    Scripted.reply = (200, "application/json", text)
    vector = client(server).query("q")
    expected = answer["data"]["result"]
    assert [s.labels for s in vector] == [item["metric"] for item in expected]
    assert [s.value for s in vector] == [float(item["value"][1]) for item in expected]


@pytest.mark.parametrize(("name", "said"), [
    ("prometheus-remote-read-partial.json", "connection refused"),
    ("thanos-partial-warnings.json", "10.42.7.19:10901: connection refused"),
])
def test_the_warnings_beside_a_partial_answer_are_kept_and_said_short(server, name, said):
    text, answer = recorded(name)
    Scripted.reply = (200, "application/json", text)
    notes = client(server).query("q").notes
    (warning,) = notes.partial
    assert warning == answer["warnings"][0] and notes.infos == ()  # whole: why is at its end
    assert short_reason(warning).endswith(said)


def test_victoria_metrics_clusters_flag_is_a_partial_answer_and_its_whole_one_is_not(server):
    for name, partial in (("victoriametrics-cluster-partial.json", (PARTIAL_FLAG,)),
                          ("victoriametrics-cluster-whole.json", ())):
        Scripted.reply = (200, "application/json", recorded(name)[0])
        assert client(server).query("q").notes.partial == partial


def test_prometheus_3s_infos_are_kept_and_the_answer_is_whole(server):
    text, answer = recorded("prometheus3-infos.json")
    Scripted.reply = (200, "application/json", text)
    notes = client(server).query("q").notes
    assert notes.partial == () and notes.infos == tuple(answer["infos"])


def test_a_downsampled_range_reads_five_minute_points_at_each_step(server):
    text, answer = recorded("thanos-downsampled-range.json")
    Scripted.reply = (200, "application/json", text)
    series = client(server).query_range("q", 1794999600, 1795000800, 15)
    assert len(series) == len(answer["data"]["result"]) == 2
    for one in series:
        steps = [t for t, _ in one.points]
        assert len(steps) == 81 and {b - a for a, b in pairwise(steps)} == {15.0}
        changes = [t for (_, before), (t, v) in pairwise(one.points) if v != before]
        assert changes and all(t % DOWNSAMPLED == 0 for t in changes)
