"""The demo's throughput verdicts through the console's own pipeline: a throughput drop is
shown only beside the job stall that explains it, never alone on a rate that still covers
the stall once the GPUs are back at work."""

from __future__ import annotations

from ranktop.tui.core.config_values import DetectSettings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.scenario import load_scenario

from tests.tui.conftest import START
from tests.tui.core.job_run import polls


def test_no_throughput_row_outlives_the_demos_job_stalls(tmp_path):
    demo = SimCluster(64, 8, 7, load_scenario())  # `ranktop --demo`'s 512 ranks
    seen = {analysis.frame.time - START: {a.kind for a in analysis.anomalies if a.rank is None}
            for analysis in polls(demo, tmp_path, demo.scenario.loop_seconds, logs=False)}
    stall = next(f for f in demo.scenario.faults if f.effect == "job_stall")
    confirmed = stall.start + DetectSettings().job_stall_seconds
    during = [kinds for t, kinds in seen.items() if confirmed <= t < stall.end]
    assert during and all({"job_stall", "throughput"} <= kinds for kinds in during)
    assert max(seen) > stall.end + 2  # walked past the stall's end
    alone = [t for t, kinds in seen.items() if "throughput" in kinds and "job_stall" not in kinds]
    assert alone == []
