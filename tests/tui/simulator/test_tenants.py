"""Other jobs sharing the simulated job's nodes: the scenario's [[tenant]] tables checked
like the rest, placed after the job's GPUs, and answered by the demo source as the
exporter serves them."""

from __future__ import annotations

from pathlib import Path

import pytest
from ranktop.tui.core.advice.tenants import NodeTenants, Tenant
from ranktop.tui.settings.config import DemoSettings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.scenario import ScenarioError, load_scenario
from ranktop.tui.simulator.scenario import Tenant as ScenarioTenant
from ranktop.tui.simulator.tenants import place
from ranktop.tui.sources.demo import demo_source

from tests.tui.simulator.test_scenario import HEADER, SHIPPED, write


def test_the_demo_has_an_evaluation_job_beside_the_rank_that_dies():
    assert load_scenario(SHIPPED).tenants == (
        ScenarioTenant(455, "eval-sweep-7", "research", 2),)


@pytest.mark.parametrize(("body", "says"), [
    ('rank = 3\nname = "x"\ngpus = 0', r"tenant\[0\]\.gpus: must be a whole number > 0, got 0"),
    ('rank = 3\nname = ""', r"tenant\[0\]\.name: must be a non-empty string"),
    ("rank = 3", r"tenant\[0\]\.name: missing key"),
    ('name = "x"', r"tenant\[0\]\.rank: missing key"),
    ('rank = -1\nname = "x"', r"tenant\[0\]\.rank: must be a whole number >= 0"),
    ('rank = 3\nname = "x"\nnamespace = 5', r"tenant\[0\]\.namespace: must be a non-empty"),
    ('rank = 3\nname = "x"\ngpu = 2', r"tenant\[0\]\.gpu: unknown key \(did you mean 'gpus'"),
])
def test_a_bad_tenant_is_one_line_naming_its_key(tmp_path: Path, body: str, says: str):
    with pytest.raises(ScenarioError, match=says):
        load_scenario(write(tmp_path, HEADER + "\n[[tenant]]\n" + body))


def test_tenants_take_the_gpus_after_the_jobs_and_each_others_on_a_node(tmp_path: Path):
    text = HEADER + "".join(f'\n[[tenant]]\nrank = {rank}\nname = "{name}"\ngpus = {gpus}\n'
                            for rank, name, gpus in ((1, "a", 2), (3, "b", 1), (9, "c", 1)))
    cluster = SimCluster(2, 4, 0, load_scenario(write(tmp_path, text)))
    placed = place(cluster.scenario.tenants, cluster.rank_map, cluster.seed)
    assert [(t.host, t.name, t.namespace, t.gpus) for t in placed] == [
        ("gpu-node-000", "a", "default", (4, 5)), ("gpu-node-000", "b", "default", (6,)),
        ("gpu-node-000", "c", "default", (7,))]  # rank 9 of 8: rank 1's node
    uuids = [u for t in placed for u in t.uuids]
    assert len(set(uuids)) == 4 and not set(uuids) & {r.uuid for r in cluster.rank_map.ranks}


def test_the_demo_source_says_who_else_is_on_the_nodes_asked():
    source = demo_source(DemoSettings(64, 8, seed=7))
    assert source.tenants(["gpu-node-056", "gpu-node-016"]) == {
        "gpu-node-056": NodeTenants((Tenant("job eval-sweep-7", (8, 9)),)),
        "gpu-node-016": NodeTenants()}
