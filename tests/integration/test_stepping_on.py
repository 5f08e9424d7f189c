"""A job that steps on without a rank that died, the whole path: `ranktop simulate`'s
exporter -> a real Prometheus -> `ranktop report --json`. Its step goes on at 6 s a step,
so nothing says it stopped or hangs and no restart is advised: the dead rank is a
``missing`` root of its own, which the job goes on without."""

from __future__ import annotations

import json

from ranktop.tui.cli.main import main

from tests.integration.cluster import (
    HERE,
    Prometheus,
    SkippingSimulator,
    held_then_one_gone,
    wait_for,
)

JOB = "integration-stepping-on"
NODES = 16
RANKS = NODES * 8
DEAD = 455 % RANKS  # rank 71
START, DEATH = 10.0, 20.0
STEPS_AFTER = 4  # the report's window holds this many steps past the death


def test_a_job_stepping_on_without_a_dead_rank_gets_no_restart(tmp_path, capsys):
    simulator = SkippingSimulator(HERE / "scenario-stepping-on.toml", seed=5, nodes=NODES,
                                  start=START)
    server = Prometheus(tmp_path, [simulator.port])
    try:
        held_then_one_gone(server, simulator, JOB, RANKS, DEATH)
        stepped = simulator.now() + STEPS_AFTER * 6.0
        wait_for(lambda: simulator.now() >= stepped, "the job stepping on")
        main(["report", "--prometheus", server.url, "--job", JOB, "--json"])
        document = json.loads(capsys.readouterr().out)
    finally:
        server.stop()
        simulator.stop()
    kinds = [a["kind"] for a in document["actions"]]
    assert "restart" not in kinds, document["actions"]
    anomalies = document["anomalies"]
    assert [a["rank"] for a in anomalies if a["kind"] == "missing"] == [DEAD]
    assert not [a for a in anomalies if a["kind"] == "hang"]
    assert all(a["explained_by"] is None or a["explained_by"]["kind"] != "missing"
               for a in anomalies)
    said = next(a for a in document["actions"] if a["rank"] == DEAD)
    assert said["kind"] == "nothing" and "the job goes on without it" in said["text"]
