"""`ranktop simulate --nccl-inspector` behind a real Prometheus: NCCL Inspector's per-dump
series are folded into one collective time and one bus bandwidth per rank, read through the
job's rank label."""

from __future__ import annotations

from statistics import median

import pytest
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.integration.cluster import HERE, Prometheus, Simulator

JOB = "integration-nccl"
RANKS = 16  # two nodes of eight: the scenario's straggler, rank 201, wraps to rank 9
STRAGGLER = 201 % RANKS
TIMES = f'nccl_collective_exec_time_microseconds{{training_job="{JOB}"}}'


@pytest.fixture(scope="module")
def inspected(tmp_path_factory):
    simulator = Simulator(HERE / "scenario-faults.toml", seed=11, nodes=2,
                          extra=("--nccl-inspector", "--job", JOB))
    server = Prometheus(tmp_path_factory.mktemp("nccl"), [simulator.port])
    try:
        # every dump (coll_sn) is a series of its own: wait for a second dump of each rank
        server.wait_for_series(f"count(max_over_time({TIMES}[1m]))", 2 * RANKS)
        yield server
    finally:
        server.stop()
        simulator.stop()


def test_collective_time_and_bus_bandwidth_are_read_per_rank(inspected: Prometheus):
    settings = load_settings(overrides={"prometheus": {"url": inspected.url, "job": JOB}},
                             environ={})
    frame = PrometheusSource(settings).poll_now()
    collective, bus = frame.values["collective_time"], frame.values["bus_bandwidth"]
    assert len(collective) == len(bus) == RANKS
    assert all(v == v for v in collective + bus)  # one value per rank, none missing
    assert 0.1 < median(collective) < 2.0  # seconds, from microseconds
    assert collective[STRAGGLER] == min(collective)  # the straggler waits least
    assert collective[STRAGGLER] < 0.75 * median(collective)
    assert 50 < median(bus) <= 360
