"""A rank that dies while other faults run, the whole path: simulator -> real Prometheus ->
analysis -> what `ranktop report --json` and the screen say. The dead rank keeps its number,
host and GPU, is named with the XID it had, and the other anomalies never flicker."""

from __future__ import annotations

import asyncio
import json
import time

from ranktop.tui.cli.main import main
from ranktop.tui.core.detect.lookback import SEEN_STEP
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.integration.cluster import HERE, Prometheus, SkippingSimulator

JOB = "integration-midway"
DEAD = 455 % 128  # the scenario's rank 455 on a 16-node simulated cluster: rank 71
# The scenario's XID comes at 40 s, the death at 52 s: polls see the job before, the quiet
# stretch up to just before the XID is skipped, and the polls go on past the death. A report
# learns which ranks reported before it from Prometheus, 10 s apart (SEEN_STEP): the skip
# waits until Prometheus has held the job past one such instant, however long it took to
# start. The stretch between the XID and the death is skipped once a poll has seen the XID
# (however long a busy machine takes to poll), not before.
START = 10.0
SKIP_TO = 38.0
XID_SEEN_SKIP_TO = 50.0
UNTIL = 58.0


def test_a_rank_dying_mid_incident_keeps_its_identity_and_its_cause(tmp_path, capsys):
    simulator = SkippingSimulator(HERE / "scenario-midway.toml", seed=11, nodes=16,
                                  start=START)
    server = Prometheus(tmp_path, [simulator.port])
    try:
        server.wait_for_series(f'count(training_step_seconds{{training_job="{JOB}"}})', 128)
        held_past = (time.time() // SEEN_STEP + 1) * SEEN_STEP + 1.0
        settings = load_settings(overrides={"prometheus": {"url": server.url, "job": JOB}},
                                 environ={})
        pipeline = Pipeline(settings, PrometheusSource(settings))
        seen: dict[tuple, set[float]] = {}
        analysis = None
        while simulator.now() < UNTIL:
            analysis = asyncio.run(pipeline.poll())
            for anomaly in analysis.anomalies:
                seen.setdefault(anomaly.key, set()).add(anomaly.since)
            if time.time() >= held_past:
                simulator.skip_to(SKIP_TO)
            if ("xid", DEAD) in seen:
                simulator.skip_to(XID_SEEN_SKIP_TO)
            time.sleep(1.0)
        assert analysis is not None and DEAD in analysis.down
        dead = analysis.rank_map.ranks[DEAD]
        assert (dead.host, dead.gpu, dead.inferred) == ("gpu-node-008", 7, False)
        missing = next(a for a in analysis.anomalies if a.kind == "missing")
        assert missing.rank == DEAD and "XID 79" in missing.summary
        assert missing.summary.startswith("not reporting since ")  # no exit seen: not "dead"
        assert missing.summary.endswith("then its series vanished)")
        # the NVLink drop and the straggler were there all along, each with one start
        assert len(seen[("nvlink", 296 % 128)]) == 1 and len(seen[("straggler", 201 % 128)]) == 1
        assert len(analysis.rank_map) == 128  # nobody renumbered

        code = main(["report", "--prometheus", server.url, "--job", JOB, "--json"])
        document = json.loads(capsys.readouterr().out)
        assert code == 1 and document["ranks"]["missing"] == [DEAD]
        # a report started after the death learns from Prometheus that the rank reported
        # before it: missing (critical), as the console says, not never seen; its place is
        # inferred (its own series are gone)
        kinds = {a["kind"]: a for a in document["anomalies"]}
        assert "never_seen" not in kinds
        gone = kinds["missing"]
        assert (gone["rank"], gone["host"], gone["gpu"], gone["inferred"]) == (
            DEAD, "gpu-node-008", 7, True)
        # (when it went down is known to within the lookback's 10 s step: a death less than
        # that before the report dates from the report's first poll)
        assert gone["severity"] == "critical" and gone["since"] <= time.time()
    finally:
        server.stop()
        simulator.stop()
