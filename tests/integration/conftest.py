"""One Prometheus and one VictoriaMetrics for each module's tests (one worker runs them all,
tests/conftest.py), both scraping two simulated jobs: one with a hot GPU and a straggler,
one with a dead rank. Tests that take ``backend`` run against each, with the same
assertions.

They start afresh for each module (lazily: a module that reads only Prometheus starts no
VictoriaMetrics): a console or report started against a backend catches up on all it holds
of the last ten minutes, 300 polls of 512 ranks once a shared backend has scraped that long
(minutes of replay per test, where a module's own backends hold a minute or two)."""

from __future__ import annotations

import pytest

from tests.integration.cluster import HERE, Prometheus, Simulator, VictoriaMetrics

JOB_FAULTS = "integration-faults"
JOB_DEATH = "integration-death"
BACKEND_NAMES = ("prometheus", "victoria-metrics")


@pytest.fixture(scope="module")
def simulators():
    started = [Simulator(HERE / "scenario-faults.toml", seed=7),
               Simulator(HERE / "scenario-death.toml", seed=8)]
    yield started
    for simulator in started:
        simulator.stop()


def _serving(server: Prometheus) -> Prometheus:
    try:
        for job, ranks_up in ((JOB_FAULTS, 512), (JOB_DEATH, 511)):
            server.wait_for_series(f'count(training_step_seconds{{training_job="{job}"}})',
                                   ranks_up)
    except BaseException:
        server.stop()  # a backend that never served is not left running past the tests
        raise
    return server


@pytest.fixture(scope="module")
def prometheus(simulators, tmp_path_factory):
    server = Prometheus(tmp_path_factory.mktemp("prometheus"), [s.port for s in simulators])
    yield _serving(server)
    server.stop()


# VictoriaMetrics hides its newest 30 s by default; here 8 s, so that the tests need not
# wait half a minute for data old enough to show without ranktop's latency_offset.
HIDDEN = "8s"


@pytest.fixture(scope="module")
def victoria(simulators, tmp_path_factory):
    server = VictoriaMetrics(tmp_path_factory.mktemp("victoria"), [s.port for s in simulators],
                             latency_offset=HIDDEN)
    yield _serving(server)
    server.stop()


@pytest.fixture(params=BACKEND_NAMES)
def backend(request):
    """Each PromQL backend in turn, scraping the same simulators."""
    return request.getfixturevalue("prometheus" if request.param == "prometheus" else "victoria")


@pytest.fixture(autouse=True)
def isolated_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for name in ("NO_COLOR", "RANKTOP_PROMETHEUS_URL", "RANKTOP_JOB", "SLURM_JOB_NODELIST"):
        monkeypatch.delenv(name, raising=False)
