"""NCCL Inspector 2.30's Prometheus labels (no rank: node, gpu="GPU0", a series per
communicator, collective, message size and algorithm) joined to the job's ranks by host
and local GPU, behind a real Prometheus scraping a fixture in the plugin's format; the same
series in a shape ranktop does not read are said so by check-config."""

from __future__ import annotations

import pytest
from ranktop.tui.cli.main import main

from tests.integration.cluster import HERE, Prometheus, file_polled_once, scraped_file

JOB = "inspector230"
STRAGGLER = 3  # GPU 1 of gpu-node-001: the others wait for it


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    scrape = HERE / "nccl-inspector-2.30.prom"
    with file_polled_once(tmp_path_factory.mktemp("inspector"), scrape, JOB,
                          "count(nccl_collective_exec_time_microseconds)", 12) as polled:
        yield polled


def test_collective_time_is_each_ranks_own_its_largest_bucket_in_seconds(frame):
    # the 64-128 MB all-reduce's mean: 21 ms, 31.5 ms on the ranks waiting for rank 3
    assert frame.values["collective_time"] == [0.0315, 0.0315, 0.0315, 0.021]
    assert min(range(4), key=frame.values["collective_time"].__getitem__) == STRAGGLER


def test_bus_bandwidth_is_each_ranks_own_largest(frame):
    assert frame.values["bus_bandwidth"] == [310.0] * 4


def test_a_shape_ranktop_does_not_read_is_said_by_check_config(tmp_path, capsys):
    # a scrape whose own target label "node" pushed the plugin's aside, as exported_node
    scrape = (HERE / "nccl-inspector-2.30.prom").read_text()
    renamed = tmp_path / "renamed.prom"
    renamed.write_text(scrape.replace('",node="', '",exported_node="'))
    with scraped_file(renamed) as port:
        server = Prometheus(tmp_path, [port])
        try:
            server.wait_for_series("count(nccl_collective_exec_time_microseconds)", 12)
            main(["check-config", "--prometheus", server.url, "--job", JOB])
        finally:
            server.stop()
    out = capsys.readouterr().out
    said = out.split("series in a shape ranktop does not read", 1)[1]
    assert ("collective_time: nccl_collective_exec_time_microseconds has series (labels "
            "algo_proto, collective, comm_name, exported_node, gpu,") in said
    assert "bus_bandwidth: nccl_bus_bandwidth_gbs has series" in said
    assert "\n  collective_time " not in out.split("\nqueries", 1)[1]  # no ranks, no values
