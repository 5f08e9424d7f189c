"""The Prometheus source at 16,384 ranks, against a client that answers like Prometheus:
every series with dcgm-exporter's (or the job's) full labels, less those a ``max by (...)``
aggregation drops. No timings: what grows with the ranks, and what is kept between polls."""

from __future__ import annotations

import functools
import json
import math
import re

import pytest
from ranktop.tui.core import ranks
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.client import Vector
from ranktop.tui.sources.prometheus.decode import Record
from ranktop.tui.sources.prometheus.source import PrometheusSource

# The 16,384-rank source is built once per module: its tests run on one xdist worker.
pytestmark = pytest.mark.xdist_group("prometheus-scale")

NOW = 1_800_000_000.0
GPUS = 8
BIG = 16_384
_BY = re.compile(r"^max by \(([^)]*)\) \(")
TARGET = {"instance": "10.0.0.1:9400", "job": "dcgm-exporter"}  # Prometheus's own labels


def gpu_labels(rank: int) -> dict[str, str]:
    """A rank's GPU as dcgm-exporter labels it, behind Prometheus."""
    gpu = rank % GPUS
    return {"gpu": str(gpu), "UUID": f"GPU-{rank:08x}-1d2f-0ab2-de11-b810d28f6877",
            "pci_bus_id": f"00000000:{gpu:02X}:00.0", "device": f"nvidia{gpu}",
            "modelName": "NVIDIA H100 80GB HBM3", "Hostname": f"gpu-node-{rank // GPUS:05d}",
            **TARGET}


def job_labels(rank: int) -> dict[str, str]:
    return {"training_job": "j", "rank": str(rank), "local_rank": str(rank % GPUS),
            "hostname": f"gpu-node-{rank // GPUS:05d}",
            "gpu_uuid": gpu_labels(rank)["UUID"], **TARGET}


class PrometheusLike:
    """Answers each per-rank query of the source with one series per rank, keeping only the
    labels its ``max by (...)`` keeps (all of them without one), as the client's fast path
    decodes them; counts the JSON Prometheus would send."""

    backend = ""

    def __init__(self, n: int) -> None:
        self.n = n
        self.source: PrometheusSource | None = None
        self.asked = 0
        self.series = 0
        self.bytes = 0
        self.hosts: dict[int, str] = {}  # ranks moved to another host

    def query(self, expression: str, budget: object = None) -> Vector:
        self.asked += 1
        key = {e: k for k, e in self.source.queries().items()}[expression]
        if key.startswith("job:"):
            return Vector([{"metric": {}, "value": [NOW, "1"]}])
        if key == "recorded":  # no recording rules here
            return Vector([])
        kept = _BY.match(expression)
        names = tuple(n.strip() for n in kept.group(1).split(",")) if kept else None
        items, size = self._answer(key, names, tuple(sorted(self.hosts.items())))
        self.series += len(items)
        self.bytes += size
        return Vector(items)

    @functools.cache  # noqa: B019 (one client per test module)
    def _answer(self, key: str, names: tuple[str, ...] | None, moved: tuple) -> tuple[list, int]:
        job = key in ("metric:step_time", "metric:compute_time")
        items, hosts = [], dict(moved)
        for rank in range(self.n):
            labels = job_labels(rank) if job else gpu_labels(rank)
            if rank in hosts:
                labels["hostname" if job else "Hostname"] = hosts[rank]
            if names is not None:
                labels = {name: labels[name] for name in names if name in labels}
            items.append({"metric": labels, "value": [NOW, repr(60.0 + rank % 7)]})
        return [Record(i["metric"], tuple(i["value"])) for i in items], len(json.dumps(items))


def polled(n: int, monkeypatch, tmp_path) -> PrometheusSource:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    settings = load_settings(overrides={"prometheus": {"url": "http://prom:9090", "job": "j"}},
                             environ={})
    client = PrometheusLike(n)
    source = PrometheusSource(settings, client=client, clock=lambda: NOW)
    client.source = source
    source.poll_now()  # the first poll learns the ranks
    return source


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield polled(BIG, monkeypatch, tmp_path_factory.mktemp("big"))


def test_the_queries_of_a_poll_do_not_grow_with_the_ranks(big, monkeypatch, tmp_path):
    small = polled(64, monkeypatch, tmp_path)
    for source in (small, big):
        source.client.asked = 0
        frame = source.poll_now()
        assert len(source.rank_map) == source.client.n
        assert not any(math.isnan(v) for v in frame.values["temperature"])
        assert not any(math.isnan(v) for v in frame.values["step_time"])
    assert big.client.asked == small.client.asked == len(big.queries())


def test_every_series_carries_only_the_labels_that_place_it(big):
    big.client.series = big.client.bytes = 0
    frame = big.poll_now()
    full = len(json.dumps({"metric": gpu_labels(BIG - 1), "value": [NOW, "61.0"]}))
    per_series = big.client.bytes / big.client.series
    assert per_series < full / 2.5
    # what is left is enough: every rank's GPU is joined and its model known
    assert all(v == 60.0 + r % 7 for r, v in enumerate(frame.values["power"]))
    assert big.gpu_model(BIG - 1) == "NVIDIA H100 80GB HBM3"
    for key, expression in big.queries().items():
        if key.startswith("metric:") and key not in ("metric:step_time", "metric:temperature"):
            kept = _BY.match(expression).group(1)
            assert "Hostname" not in kept and "modelName" not in kept, key


def test_the_rank_map_is_kept_while_the_rank_labels_stay_the_same(big, monkeypatch):
    built = []
    learn = ranks.from_job_series
    monkeypatch.setattr(ranks, "from_job_series", lambda *a, **k: built.append(1) or learn(*a, **k))
    rank_map = big.rank_map
    for _ in range(3):
        big.poll_now()
    assert big.rank_map is rank_map and built == []
    big.client.hosts[5] = "gpu-node-spare"  # rank 5 restarted on a spare node
    big.poll_now()
    assert built == [1]
    assert big.rank_map is not rank_map and big.rank_map.ranks[5].host == "gpu-node-spare"
    rank_map = big.rank_map
    big.poll_now()
    assert big.rank_map is rank_map and built == [1]
    big.client.hosts.clear()
