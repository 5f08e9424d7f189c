"""A real Prometheus scraping a small simulated job (32 ranks), one for each module's tests,
and a fault proxy before it."""

from __future__ import annotations

import pytest
from ranktop.tui.settings.config import load_settings

from tests.faults.proxy import FaultProxy
from tests.integration.cluster import HERE, served

JOB = "integration-faults"
RANKS = 32


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    with served(tmp_path_factory.mktemp("fault-prometheus"), HERE / "scenario-faults.toml",
                JOB, RANKS, seed=7, nodes=4) as server:
        yield server


@pytest.fixture
def proxy(upstream):
    made = FaultProxy(upstream.url)
    yield made
    made.stop()


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in ("NO_COLOR", "RANKTOP_PROMETHEUS_URL", "RANKTOP_JOB", "SLURM_JOB_NODELIST"):
        monkeypatch.delenv(name, raising=False)


def settings_for(url: str, timeout: float = 2.0, refresh: float = 0.5, **prometheus):
    return load_settings(overrides={
        "prometheus": {"url": url, "job": JOB, "timeout_seconds": timeout, **prometheus},
        "display": {"refresh_seconds": refresh}}, environ={})
