"""Who else is on some nodes, from dcgm-exporter's labels: one query for all the nodes asked.

Every GPU of the nodes answers once (its temperature, which every dcgm-exporter exports),
with only the labels that place it and name who uses it: the pod on Kubernetes
(``exported_pod``/``exported_namespace`` behind a ServiceMonitor, ``pod``/``namespace``
where the exporter's own labels are kept), the job on an HPC cluster (``hpc_job``). The
job's own GPUs are dropped and the rest grouped by ``core.advice.tenants``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from ...core.advice.tenants import (
    NO_JOB_LABEL,
    Gpu,
    NodeTenants,
    hpc_user,
    pod_user,
    tenants_of,
)
from ...core.domain import DCGM_GPU_LABEL, DCGM_NODE_LABELS, DCGM_UUID_LABELS
from ...core.model import RankMap
from . import promql
from .client import PromClient

POD, NAMESPACE = "pod", "namespace"
EXPORTED_POD, EXPORTED_NAMESPACE = f"exported_{POD}", f"exported_{NAMESPACE}"
HPC_JOB = "hpc_job"
TENANT_LABELS = (*DCGM_NODE_LABELS, DCGM_GPU_LABEL, *DCGM_UUID_LABELS, POD, EXPORTED_POD,
                 NAMESPACE, EXPORTED_NAMESPACE, HPC_JOB)
Labels = Mapping[str, str]


def tenants(client: PromClient, nodes: Sequence[str], rank_map: RankMap, dcgm_extra: str,
            held: Mapping[str, str]) -> dict[str, NodeTenants]:
    """Who else has GPUs on each of ``nodes`` (as the rank map names them; ``held``: a
    name as its label holds it, where they differ). Blocking; raises QueryError."""
    if not nodes:
        return {}
    labelled = {held.get(node, node): node for node in nodes}
    answer = client.query(tenants_query(list(labelled), dcgm_extra))
    return tenants_of(gpus_of((labels for labels, _ in answer.pairs()), labelled),
                      rank_map, nodes)


def tenants_query(nodes: Sequence[str], dcgm_extra: str) -> str:
    """``count by (<labels>) (...)`` over the GPUs of ``nodes``, under either spelling of
    dcgm-exporter's host label and either name of its temperature (DCGM 4.6 renamed it)."""
    pattern = promql.quote("^(" + "|".join(re.escape(node) for node in nodes) + ")$")
    extra = f",{dcgm_extra}" if dcgm_extra else ""
    series = " or ".join(f"{probe}{{{label}=~{pattern}{extra}}}"
                         for label in DCGM_NODE_LABELS for probe in promql.DCGM_PROBE_METRICS)
    return f"count by ({', '.join(TENANT_LABELS)}) ({series})"


def gpus_of(series: Iterable[Labels], nodes: Mapping[str, str]) -> list[Gpu]:
    """Each series' GPU, on its node as ``nodes`` (label value -> name) names it; series
    of no node asked about, or with no GPU index, are left out."""
    found = list(series)
    # Behind a ServiceMonitor, ``pod`` is the exporter's own pod: the GPU's is renamed.
    renamed = any(EXPORTED_POD in labels for labels in found)
    gpus = []
    for labels in found:
        node = nodes.get(next((labels[k] for k in DCGM_NODE_LABELS if labels.get(k)), ""))
        index = labels.get(DCGM_GPU_LABEL, "").strip()
        if node is None or not index.isdecimal():
            continue
        uuid = next((labels[k] for k in DCGM_UUID_LABELS if labels.get(k)), "")
        gpus.append(Gpu(node, int(index), uuid, user_of(labels, renamed)))
    return gpus


def user_of(labels: Labels, renamed: bool) -> str:
    """Who uses a GPU, as its labels say: "namespace/pod", "job <id>", or nobody named."""
    pod, namespace = (EXPORTED_POD, EXPORTED_NAMESPACE) if renamed else (POD, NAMESPACE)
    if labels.get(pod):
        return pod_user(labels[pod], labels.get(namespace, ""))
    if labels.get(HPC_JOB):
        return hpc_user(labels[HPC_JOB])
    return NO_JOB_LABEL
