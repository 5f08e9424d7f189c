"""Prometheus for the job, NVML for this node: this node's ranks take NVML's values."""

from __future__ import annotations

import asyncio
import math

from ranktop.tui.core.advice.tenants import NodeTenants, Tenant
from ranktop.tui.core.history import Point
from ranktop.tui.core.model import Frame, Health, Rank, RankMap, SourceStatus
from ranktop.tui.sources.base import Source
from ranktop.tui.sources.merged import MergedSource

JOB = RankMap(
    ranks=tuple(Rank(rank=r, host=f"h{r // 2}", gpu=r % 2, node=r // 2, uuid=f"GPU-{r}")
                for r in range(4)),
    hosts=("h0", "h1"), gpus_per_node=2, source="job metric labels")


class Fixed(Source):
    def __init__(self, name, rank_map, frame=None, error=None):
        self.name, self.job_name, self.rank_map = name, "job", rank_map
        self.frame, self.error = frame, error

    async def poll(self):
        if self.error:
            raise self.error
        return self.frame

    def status(self):
        return SourceStatus(self.name, Health.OK, since=0.0, detail="ranks from labels")


def local_map(uuids, host="h1"):
    return RankMap(ranks=tuple(Rank(rank=i, host=host, gpu=i, node=0, uuid=u)
                               for i, u in enumerate(uuids)),
                   hosts=(host,), gpus_per_node=len(uuids), source="GPU index")


def test_this_nodes_ranks_take_nvmls_values_and_are_marked():
    main = Frame(time=1.0, values={"temperature": [60.0, 61.0, 62.0, 63.0],
                                   "sm_active": [88.0] * 4})
    local = Frame(time=1.0, values={"temperature": [70.0, math.nan], "sm_active": [5.0, 5.0]})
    merged = MergedSource(Fixed("prom", JOB, main), Fixed("nvml", local_map(["GPU-2", "GPU-3"]),
                                                          local))
    frame = asyncio.run(merged.poll())
    assert frame.values["temperature"] == [60.0, 61.0, 70.0, 63.0]  # NaN from NVML keeps 63
    assert frame.values["sm_active"] == [88.0] * 4  # NVML has no SM-active counter
    assert frame.local == {2, 3}
    assert "NVML: 2 ranks of this node" in merged.status().detail


def test_without_uuids_the_node_joins_by_host_and_gpu():
    main = Frame(time=1.0, values={"temperature": [60.0] * 4})
    local = Frame(time=1.0, values={"temperature": [77.0, 78.0]})
    merged = MergedSource(Fixed("prom", JOB, main),
                          Fixed("nvml", local_map(["", ""], host="h0"), local))
    assert asyncio.run(merged.poll()).values["temperature"] == [77.0, 78.0, 60.0, 60.0]


def test_a_failing_nvml_leaves_prometheus_values_and_a_failing_prometheus_raises():
    main = Frame(time=1.0, values={"temperature": [60.0] * 4})
    merged = MergedSource(Fixed("prom", JOB, main),
                          Fixed("nvml", local_map(["GPU-0"]), error=RuntimeError("GPU lost")))
    assert asyncio.run(merged.poll()) is main
    broken = MergedSource(Fixed("prom", JOB, error=RuntimeError("refused")),
                          Fixed("nvml", local_map(["GPU-0"]), main))
    try:
        asyncio.run(broken.poll())
    except RuntimeError as error:
        assert "refused" in str(error)
    else:
        raise AssertionError("a failed Prometheus poll must fail the merged poll")


class Remembering(Fixed):
    """A job source that keeps history and was told by its server to wait."""

    retry_after = 30.0

    def backfill(self, rank, metrics, seconds, step):
        return {metric: [Point(1.0, float(rank), 0.5)] for metric in metrics}

    def gpu_model(self, rank):
        return "NVIDIA H100 80GB HBM3"

    def held(self, rank):
        return Rank(rank.rank, rank.host.upper(), rank.gpu, rank.node)

    def tenants(self, nodes):
        return {node: NodeTenants((Tenant("job 7", (8,)),)) for node in nodes}


def test_the_job_sources_history_retry_after_labels_and_models_go_through():
    merged = MergedSource(Remembering("prometheus", JOB), Fixed("nvml", local_map(["GPU-2"])))
    assert merged.retry_after == 30.0
    assert merged.backfill(2, ["temperature"], 600.0, 4.0) == {
        "temperature": [Point(1.0, 2.0, 0.5)]}
    assert merged.gpu_model(2) == "NVIDIA H100 80GB HBM3"
    assert merged.held(JOB.ranks[2]).host == "H1"
    assert merged.tenants(["h1"]) == {"h1": NodeTenants((Tenant("job 7", (8,)),))}


def test_a_job_source_without_them_gives_the_neutral_answers():
    merged = MergedSource(Fixed("prometheus", JOB), Fixed("nvml", local_map(["GPU-2"])))
    assert merged.retry_after is None
    assert merged.backfill(2, ["temperature"], 600.0, 4.0) == {}
    assert merged.lookback(["loss"], 600.0, 4.0) is None
    assert merged.job_past(["step"], 3600.0, 20.0, 0.0) is None
    assert merged.gpu_model(2) == "" and merged.held(JOB.ranks[2]) == JOB.ranks[2]
    assert merged.tenants(["h1"]) == {}  # who else is on a node: not known
