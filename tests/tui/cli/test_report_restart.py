"""`ranktop report` after the demo's restart: the restart is an entry of its own, in the
text and in the JSON's resolved list, and the XID 79 that killed the rank keeps its drain."""

from __future__ import annotations

import json

from ranktop.tui.cli.report import as_json, as_text

from tests.tui.cli.test_report import report_at

DYING_RANK = 455  # dies of an XID 79 172 s into the demo; the job is back at 220 s


def test_a_report_after_the_restart_has_it_on_record_and_keeps_the_xids_drain():
    findings, settings = report_at(215.0, duration=20.0)
    text = as_text(findings, settings)
    assert "restarts in the last hour (resolved):" in text
    (line,) = [s for s in text.splitlines() if "the job restarted from step" in s]
    assert f"rank {DYING_RANK} died (XID 79: GPU has fallen off the bus) at" in line
    assert "(attempt 1)" in line and "GPU-hours lost" in line
    document = json.loads(as_json(findings, settings))
    (restart,) = [a for a in document["resolved"] if a["kind"] == "restart"]
    assert restart["rank"] == DYING_RANK and restart["summary"] == line.strip()
    assert restart["host"] == "gpu-node-056"
    (xid,) = [a for a in document["anomalies"] if a["kind"] == "xid"
              and a["rank"] == DYING_RANK]
    assert xid["summary"].endswith("(before the restart)")
    drains = [a for a in document["actions"] if a["kind"] == "drain"]
    assert any(a["rank"] == DYING_RANK and a["node"] == "gpu-node-056" for a in drains)
