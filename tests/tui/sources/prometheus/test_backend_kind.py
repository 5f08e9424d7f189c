"""`check-config`'s word on the backend's kind, from what each kind shows of itself."""

from __future__ import annotations

from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.backend_kind import (
    MIMIR,
    PROMETHEUS,
    THANOS,
    VICTORIA_CLUSTER,
    backend_kind,
)
from ranktop.tui.sources.prometheus.client import VICTORIA_METRICS, PromClient, QueryError


class Shown(PromClient):
    """A client whose status endpoints answer as a given backend's would."""

    def __init__(self, url: str, endpoints: dict[str, object], backend: str = "") -> None:
        super().__init__(load_settings(overrides={"prometheus": {"url": url}},
                                       environ={}).prometheus)
        self.endpoints, self.backend = endpoints, backend

    def status(self, endpoint: str) -> object:
        if endpoint not in self.endpoints:
            raise QueryError("HTTP 404", "not found")
        return self.endpoints[endpoint]


def test_each_kind_is_told_by_what_it_shows_of_itself():
    thanos = backend_kind(Shown("http://q:9090", {"stores": {"store": []}}))
    assert thanos.name == THANOS and "dedup=true" in thanos.said()
    assert "partial_response=true" in thanos.said()
    cluster = backend_kind(Shown("http://vm:8481/select/0/prometheus", {}, VICTORIA_METRICS))
    assert cluster.name == VICTORIA_CLUSTER and "isPartial" in cluster.uses
    assert backend_kind(Shown("http://vm:8428", {}, VICTORIA_METRICS)).name == VICTORIA_METRICS
    mimir = backend_kind(Shown("http://mimir/prometheus", {"status/buildinfo": {}}))
    assert mimir.name == MIMIR and "__tenant_id__" in mimir.uses
    sharded = backend_kind(Shown("http://p:9090", {
        "status/buildinfo": {"version": "2.42.0"},
        "status/config": {"yaml": "remote_read:\n- url: http://shard-a/api/v1/read\n"}}))
    assert sharded.name == PROMETHEUS and "remote_read" in sharded.said()
    assert backend_kind(Shown("http://x", {})).said().startswith("not known")
