"""Goodput, the whole path: simulator -> real Prometheus -> analysis -> `ranktop report
--json`'s "goodput". A report started after a stall takes the time before it from
Prometheus's history of the step counter (a range query), and lays the stall's time at its
door."""

from __future__ import annotations

import json
import time

import pytest
from ranktop.tui.cli.main import main
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.goodput_truth import GoodputTruth
from ranktop.tui.simulator.scenario import load_scenario

from tests.integration.cluster import HERE, Prometheus, SkippingSimulator

JOB = "integration-goodput"
SCENARIO = HERE / "scenario-goodput.toml"
START = 10.0
UNTIL = 50.0  # the stall is from 25 s to 40 s
NODES = 1


def test_a_report_after_a_stall_gives_the_goodput_and_the_stalls_lost_time(tmp_path, capsys):
    simulator = SkippingSimulator(SCENARIO, seed=5, nodes=NODES, start=START)
    server = Prometheus(tmp_path, [simulator.port])
    try:
        server.wait_for_series(f'count(training_step_seconds{{training_job="{JOB}"}})', 8)
        while simulator.now() < UNTIL:
            time.sleep(1.0)
        main(["report", "--prometheus", server.url, "--job", JOB, "--json"])
        now = simulator.now()
        goodput = json.loads(capsys.readouterr().out)["goodput"]
    finally:
        server.stop()
        simulator.stop()
    covered = goodput["covered_seconds"]
    assert covered > 25  # Prometheus's past, from before the stall
    truth = GoodputTruth(SimCluster(NODES, seed=5, scenario=load_scenario(SCENARIO)))
    # (the report's last frame is a second or so before ``now``: Prometheus's lag)
    assert goodput["hour"] == pytest.approx(truth.over(now - covered, now).share, abs=0.06)
    assert goodput["lost_seconds"]["stall"] == pytest.approx(15, abs=4)
    assert goodput["baseline_step_seconds"] == pytest.approx(1.12, rel=0.02)
