"""Label values with quotes, backslashes and newlines, sent to a real Prometheus: each stays
one value in one matcher, whatever it holds."""

from __future__ import annotations

import time

import pytest
from ranktop.tui.core.model import Rank
from ranktop.tui.core.text import plain
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.alerts import prometheus_history
from ranktop.tui.sources.prometheus import promql
from ranktop.tui.sources.prometheus.client import PromClient

# A host name that, pasted between quotes, would add a matcher that every host passes.
INJECTION = 'gpu-node-004",Hostname=~".+'
HOSTILE = [INJECTION, 'quote " backslash \\ newline \n end', "trailing backslash \\"]


@pytest.fixture
def settings(prometheus):
    return load_settings(overrides={"prometheus": {"url": prometheus.url}}, environ={})


@pytest.fixture
def client(settings):
    with PromClient(settings.prometheus) as made:
        yield made


@pytest.mark.parametrize("value", HOSTILE)
def test_prometheus_reads_a_quoted_value_back_as_itself(client, value):
    """label_replace writes the string literal into a label: Prometheus hands back exactly
    the value, so the literal parsed as one string with nothing added."""
    samples = list(client.query(f'label_replace(vector(1), "host", {promql.quote(value)}, "", "")'))
    # The client shows a control character (the newline) as "�": nothing else changes.
    assert [sample.labels["host"] for sample in samples] == [plain(value)]


def test_an_injected_matcher_is_only_part_of_a_host_name(client):
    pasted = f'count(DCGM_FI_DEV_GPU_TEMP{{Hostname="{INJECTION}",gpu="5"}})'
    assert [s.value for s in client.query(pasted)] == [2.0]  # both jobs' gpu-node-004 GPU 5
    quoted = promql.selector({"Hostname": INJECTION, "gpu": "5"})
    assert list(client.query(f"count(DCGM_FI_DEV_GPU_TEMP{quoted})")) == []  # no such host


@pytest.mark.parametrize("host", HOSTILE)
def test_a_rank_on_a_hostile_host_asks_without_error_and_finds_nothing(client, settings, host):
    rank = Rank(rank=9999, host=host, gpu=5, node=4)  # no job has a rank 9999
    metric = settings.metrics["temperature"]
    now = time.time()
    query = promql.rank_query(metric.queries, rank, "", {"rank": "9999"})
    assert client.query_range(query, now - 60, now, 5) == []
    assert prometheus_history(settings, rank, 600, now, step=5) == []
