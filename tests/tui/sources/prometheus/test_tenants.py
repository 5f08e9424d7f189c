"""Who else is on a node, from Prometheus: the one query, its answer read as dcgm-exporter
labels GPUs (Kubernetes renamed or kept, HPC jobs, nothing), the job's own GPUs left out;
and another job's GPUs never taken for ranks of the job."""

from __future__ import annotations

import pytest
from ranktop.tui.core.advice.tenants import NodeTenants, Tenant
from ranktop.tui.sources.prometheus.client import QueryError, Sample
from ranktop.tui.sources.prometheus.tenants import tenants_query

from tests.tui.sources.prometheus.test_source import NOW, dcgm, source  # noqa: F401


def gpu(host: str, index: int, uuid: str, **labels: str) -> Sample:
    return Sample({"Hostname": host, "gpu": str(index), "UUID": uuid, **labels}, 1.0, NOW)


def test_one_query_for_the_nodes_asked_under_either_host_label_their_names_escaped():
    query = tenants_query(["gpu-node-056", "a.b"], 'cluster="east"')
    assert query == (
        "count by (Hostname, hostname, gpu, UUID, uuid, pod, exported_pod, namespace, "
        "exported_namespace, hpc_job) ("
        'DCGM_FI_DEV_GPU_TEMP{Hostname=~"^(gpu\\\\-node\\\\-056|a\\\\.b)$",cluster="east"} or '
        'DCGM_FI_DEV_GPU_TEMP_CELSIUS{Hostname=~"^(gpu\\\\-node\\\\-056|a\\\\.b)$",'
        'cluster="east"} or '
        'DCGM_FI_DEV_GPU_TEMP{hostname=~"^(gpu\\\\-node\\\\-056|a\\\\.b)$",cluster="east"} or '
        'DCGM_FI_DEV_GPU_TEMP_CELSIUS{hostname=~"^(gpu\\\\-node\\\\-056|a\\\\.b)$",'
        'cluster="east"})')
    assert "DCGM_FI_DEV_GPU_TEMP{Hostname=~" in tenants_query(["n"], "")


def asked(source, nodes, answer):  # noqa: F811
    source.poll_now()  # the rank map: ranks 0-3, GPUs 0 and 1 of h0 and h1, UUIDs GPU-<rank>
    source.client.answers[tenants_query(nodes, "")] = answer
    found = source.tenants(nodes)
    assert source.client.asked[-1] == tenants_query(nodes, "")
    return found


def test_the_jobs_own_gpus_are_left_out_and_the_others_grouped_by_pod(source):  # noqa: F811
    exporter = {"pod": "nvidia-dcgm-exporter-x7k2p", "namespace": "gpu-operator"}
    found = asked(source, ["h1"], [
        gpu("h1", 0, "GPU-2", exported_pod="llama-worker-1", exported_namespace="training",
            **exporter),
        gpu("h1", 1, "GPU-3", exported_pod="llama-worker-1", exported_namespace="training",
            **exporter),
        gpu("h1", 3, "GPU-b", exported_pod="eval-0", exported_namespace="research", **exporter),
        gpu("h1", 2, "GPU-a", exported_pod="eval-0", exported_namespace="research", **exporter),
        gpu("h1", 4, "GPU-c", **exporter),  # idle: only the exporter's own pod label
    ])
    assert found == {"h1": NodeTenants((Tenant("research/eval-0", (2, 3)),
                                        Tenant("", (4,))))}


def test_pods_whose_own_labels_were_kept_and_hpc_jobs(source):  # noqa: F811
    found = asked(source, ["h0", "h1"], [
        gpu("h0", 2, "GPU-a", pod="eval-0", namespace="research"),
        gpu("h1", 2, "GPU-b", hpc_job="4242"),
        gpu("h1", 3, "GPU-c", hpc_job="4242"),
    ])
    assert found == {"h0": NodeTenants((Tenant("research/eval-0", (2,)),)),
                     "h1": NodeTenants((Tenant("job 4242", (2, 3)),))}


def test_a_node_with_only_the_jobs_gpus_has_nothing_else(source):  # noqa: F811
    found = asked(source, ["h0"], [gpu("h0", 0, "GPU-0"), gpu("h0", 1, "GPU-1")])
    assert found == {"h0": NodeTenants(())}
    assert found["h0"].known


def test_a_failed_query_raises_for_the_engine_to_say(source):  # noqa: F811
    source.poll_now()
    source.client.answers[tenants_query(["h0"], "")] = QueryError("HTTP 503", "unavailable")
    with pytest.raises(QueryError, match="unavailable"):
        source.tenants(["h0"])


def test_another_jobs_gpus_on_a_node_of_the_job_are_not_ranks(source):  # noqa: F811
    others = [dcgm(0, 99.0, gpu="2", UUID="GPU-other-a", hpc_job="4242"),
              dcgm(2, 98.0, gpu="3", UUID="GPU-other-b", exported_pod="eval-0")]
    source.client.answers["metric:temperature"] += others
    frame = source.poll_now()
    assert len(source.rank_map) == 4
    assert frame.values["temperature"] == [60.0, 61.0, 62.0, 63.0]
    assert "DCGM 4/4" in source.status().detail
