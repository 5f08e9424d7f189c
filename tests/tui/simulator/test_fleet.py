"""`ranktop simulate --fleet`: the shipped fleet's jobs, each its own exporter with its own
job label, GPUs and nodes; a fleet file with mistakes is refused, naming them."""

from __future__ import annotations

import re

import pytest
from ranktop.tui.simulator.fleet import fleet_servers, load_fleet
from ranktop.tui.simulator.scenario import ScenarioError


def test_the_shipped_fleet_serves_each_job_under_its_own_name_and_gpus():
    jobs = load_fleet()
    assert len({job.nodes for job in jobs}) > 2  # jobs of different sizes
    assert {"rlhf-stalled", "pretrain-dead-rank"} <= {job.name for job in jobs}
    servers = fleet_servers(jobs, "127.0.0.1", 0, start=30.0)
    try:
        uuids: set[str] = set()
        hosts: set[str] = set()
        for job, server in zip(jobs, servers, strict=True):
            scrape = server.renderer.render(35.0)  # before the dead-rank job loses its rank
            names = set(re.findall(r'training_job="([^"]*)"', scrape))
            assert names == {job.name}
            mine = set(re.findall(r'gpu_uuid="([^"]*)"', scrape))
            assert len(mine) == job.nodes * 8 and not mine & uuids
            uuids |= mine
            nodes = set(re.findall(r'Hostname="([^"]*)"', scrape))
            assert len(nodes) == job.nodes and not nodes & hosts  # nodes of its own
            hosts |= nodes
    finally:
        for server in servers:
            server.server_close()


def test_the_dead_rank_job_loses_one_rank_and_the_stalled_one_stands_still():
    jobs = {job.name: job for job in load_fleet()}
    servers = dict(zip(jobs, fleet_servers(list(jobs.values()), "127.0.0.1", 0, start=0.0),
                       strict=True))
    try:
        def ranks(name: str, t: float) -> int:
            return servers[name].renderer.render(t).count("training_step_seconds{")

        def steps(name: str, t: float) -> set[str]:
            return set(re.findall(r"^training_step\{[^}]*\} (\S+)$",
                                  servers[name].renderer.render(t), re.MULTILINE))

        assert ranks("pretrain-dead-rank", 30.0) == 64 and ranks("pretrain-dead-rank", 50.0) == 63
        assert steps("rlhf-stalled", 30.0) == steps("rlhf-stalled", 90.0)
        assert steps("eval-sweep-7", 30.0) != steps("eval-sweep-7", 90.0)
    finally:
        for server in servers.values():
            server.server_close()


def test_a_fleet_file_with_mistakes_is_refused(tmp_path):
    path = tmp_path / "fleet.toml"
    path.write_text('[[job]]\nname = "a"\nnodes = 0\n')
    with pytest.raises(ScenarioError, match="nodes must be"):
        load_fleet(path)
    path.write_text("job = 3\n")
    with pytest.raises(ScenarioError, match=r"\[\[job\]\]"):
        load_fleet(path)
