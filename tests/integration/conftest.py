"""One Prometheus for the session, scraping two simulated jobs: one with a hot GPU and a
straggler, one with a dead rank."""

from __future__ import annotations

import pytest

from tests.integration.cluster import HERE, Prometheus, Simulator

JOB_FAULTS = "integration-faults"
JOB_DEATH = "integration-death"


@pytest.fixture(scope="session")
def simulators():
    started = [Simulator(HERE / "scenario-faults.toml", seed=7),
               Simulator(HERE / "scenario-death.toml", seed=8)]
    yield started
    for simulator in started:
        simulator.stop()


@pytest.fixture(scope="session")
def prometheus(simulators, tmp_path_factory):
    server = Prometheus(tmp_path_factory.mktemp("prometheus"), [s.port for s in simulators])
    for job, ranks_up in ((JOB_FAULTS, 512), (JOB_DEATH, 511)):
        server.wait_for_series(f'count(training_step_seconds{{training_job="{job}"}})', ranks_up)
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def isolated_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for name in ("NO_COLOR", "RANKTOP_PROMETHEUS_URL", "RANKTOP_JOB", "SLURM_JOB_NODELIST"):
        monkeypatch.delenv(name, raising=False)
