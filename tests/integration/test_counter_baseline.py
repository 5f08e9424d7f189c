"""A counter's baseline is what the backend held before the fault, never its value at
ranktop's first poll: `ranktop report` started after the errors began (simulator -> real
Prometheus -> the late start's replay) names them as new. Prometheus holds less than the
replay's window, so the replay's first moments have no data and its first frames ask for
the counters' non-zero series only: a counter at 0 then is in no answer at all."""

from __future__ import annotations

import json
import time

from ranktop.tui.cli.main import main

from tests.integration.cluster import HERE, Prometheus, SkippingSimulator

JOB = "integration-rising-counters"
RANKS = 16  # two nodes of eight: rank 9 (NVLink) on gpu-node-001, rank 5 (ECC) on 000
BASELINE_SECONDS = 3.0  # scraped before the faults: every counter at 0
STARTED_AT = 70.0  # the scenario's time when ranktop starts: the faults began at 40 and 45 s
SCRAPED_AFTER = 4.0  # seconds of scrapes after the skip to it


def test_errors_that_rose_before_a_late_start_are_new_with_their_advice(tmp_path, capsys):
    simulator = SkippingSimulator(HERE / "scenario-rising-counters.toml", seed=31, nodes=2)
    server = Prometheus(tmp_path, [simulator.port])
    try:
        server.wait_for_series(f'count(training_step_seconds{{training_job="{JOB}"}})', RANKS)
        time.sleep(BASELINE_SECONDS)
        simulator.skip_to(STARTED_AT)  # the quiet stretch and the rise pass at once
        time.sleep(SCRAPED_AFTER)
        main(["report", "--prometheus", server.url, "--job", JOB, "--json"])
    finally:
        server.stop()
        simulator.stop()
    document = json.loads(capsys.readouterr().out)
    found = {(a["kind"], a["rank"]): a["summary"] for a in document["anomalies"]}
    assert found[("memory", 5)].startswith("row(s) remapped +1 in the last 10 min (1 in all)")
    nvlink = found[("nvlink_errors", 9)]  # every error since 0, not "none new"
    rise = int(nvlink.split(" on rank 9")[0].rsplit("+", 1)[1])
    assert rise > 100, nvlink
    actions = [a["text"] for a in document["actions"]]
    # a reset of rank 9's GPU, or the node's drain once a peer's errors pass the bar too
    link = ("reset GPU 1 on gpu-node-001 when idle (NVLink CRC errors +",
            "drain gpu-node-001 (NVLink CRC errors +")
    assert any(text.startswith(link) for text in actions), actions
    assert any(text.startswith("reset GPU 5 on gpu-node-000 when idle") for text in actions)
