"""Which kind of PromQL backend answers, as `ranktop check-config` tells it, and what ranktop
sends it because of that.

Read from what the backend shows of itself, in order: VictoriaMetrics names itself in a
header on every answer (a cluster's select path holds "/select/"); a Thanos querier has a
stores endpoint no other backend has; Mimir and Cortex serve the API under a prefix
(".../prometheus") and name themselves in their build information; a Prometheus answers its
build information with its version, and reading shards through remote_read is in its
configuration. Federated Mimir tenants ("a|b") add ``__tenant_id__`` to every series.
Every probe is bounded by the client's timeout; a probe that fails only leaves the kind less
sure.
"""

from __future__ import annotations

from dataclasses import dataclass

from .client import VICTORIA_METRICS, PromClient, QueryError

TENANT_LABEL = "__tenant_id__"  # Mimir's and Cortex's, on every series of a federated query
PROMETHEUS = "Prometheus"
THANOS = "Thanos querier"
MIMIR = "Mimir or Cortex"
VICTORIA_CLUSTER = "VictoriaMetrics cluster"


@dataclass(frozen=True)
class BackendKind:
    """A backend's kind, how it was told, and what ranktop asks of it because of it."""

    name: str  # "" where nothing told it
    told_by: str = ""
    uses: str = ""

    def said(self) -> str:
        """"Thanos querier (its stores endpoint answers): asked with dedup=true, …"."""
        if not self.name:
            return "not known (it answers PromQL; nothing it sent names it)"
        words = f"{self.name} ({self.told_by})"
        return f"{words}: {self.uses}" if self.uses else words


def backend_kind(client: PromClient) -> BackendKind:
    """The kind of backend behind ``client`` (which has answered one query already)."""
    url = client.settings.url.rstrip("/")
    uses = _uses(client)
    if client.backend == VICTORIA_METRICS:
        if "/select/" in url:
            return BackendKind(VICTORIA_CLUSTER, "its header and /select/ path",
                               "a partial answer is read from isPartial; " + uses)
        return BackendKind(VICTORIA_METRICS, "its header", "latency_offset applies")
    if _answers(client, "stores"):
        return BackendKind(THANOS, "its stores endpoint answers",
                           "a partial answer is read from its warnings; " + uses)
    info = _build_info(client)
    application = str(info.get("application", ""))
    if url.endswith("/prometheus") or "mimir" in application.lower() \
            or "cortex" in application.lower():
        return BackendKind(MIMIR, "its /prometheus path or build information",
                           f"tenant header X-Scope-OrgID; {TENANT_LABEL} folded; " + uses)
    if info.get("version"):
        remote = _reads_remote(client)
        told = f"version {info['version']}" + (", reading shards through remote_read"
                                                 if remote else "")
        return BackendKind(PROMETHEUS, told, "a failed remote read is read from its "
                           "warnings" if remote else "")
    return BackendKind("")


def federated_tenants(client: PromClient, metric: str) -> bool:
    """Whether the series of ``metric`` carry a federated query's tenant label."""
    try:
        return any(TENANT_LABEL in labels for labels, _ in client.query(
            f"topk(1, {metric})").pairs())
    except QueryError:
        return False


def _uses(client: PromClient) -> str:
    s = client.settings
    replicas = f" by {', '.join(s.replica_labels)}" if s.replica_labels else ""
    return (f"asked with dedup={str(s.dedup).lower()}{replicas}, "
            f"partial_response={str(s.partial_response).lower()}, "
            "max_source_resolution=0s for the last 40 h")


def _answers(client: PromClient, endpoint: str) -> bool:
    try:
        client.status(endpoint)
    except QueryError:
        return False
    return True


def _build_info(client: PromClient) -> dict:
    try:
        found = client.status("status/buildinfo")
    except QueryError:
        return {}
    return found if isinstance(found, dict) else {}


def _reads_remote(client: PromClient) -> bool:
    try:
        config = client.status("status/config")
    except QueryError:
        return False
    return isinstance(config, dict) and "remote_read" in str(config.get("yaml", ""))
