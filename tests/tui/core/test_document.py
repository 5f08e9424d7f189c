"""The JSON document: every number a JSON number or null; the source's last poll as its
status says it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
from ranktop.tui.core.analysis import Analysis
from ranktop.tui.core.document import document, finite
from ranktop.tui.core.findings import Findings
from ranktop.tui.core.model import Frame, Health, QueryTime, RankMap, SourceStatus


def test_a_float_json_has_no_number_for_is_null_at_any_depth():
    found = finite({"impact": math.inf, "rows": [(1.5, -math.inf), {"ratio": math.nan}],
                    "rank": 3, "said": "inf"})
    assert found == {"impact": None, "rows": [[1.5, None], {"ratio": None}], "rank": 3,
                     "said": "inf"}
    json.dumps(found, allow_nan=False)


SCHEMA = json.loads((Path(__file__).parents[3] / "docs" / "analysis-schema.json").read_text())


def source_entry(status: SourceStatus) -> dict:
    """The document's source, of a report whose source's status is ``status``; the document
    as the schema says."""
    ranks = RankMap.grid(["a"], 2, "test")
    frame = Frame(10.0, {"step_time": [0.5, 0.5]})
    findings = Findings("job", Analysis(status, ranks, frame=frame,
                                        up=tuple(frame.ranks_up(2))))
    found = document(findings, {}, (), "test")
    jsonschema.validate(found, SCHEMA)
    return found["source"]


def test_the_report_names_the_last_polls_slowest_query_and_its_time():
    slow = SourceStatus("prometheus", Health.SLOW, since=0.0, poll_seconds=20.3,
                        message="slow: the poll took 20.3 s, 12.1 s of it waiting on sm_active",
                        detail="no recording rules in Prometheus: `ranktop rules` would …",
                        slowest=QueryTime("metric:sm_active", 12.1, 2_900_000))
    entry = source_entry(slow)
    assert entry["slowest_query"] == {"key": "metric:sm_active", "asked_for": "sm_active",
                                      "seconds": 12.1, "bytes": 2_900_000}
    assert entry["poll_seconds"] == 20.3 and "waiting on sm_active" in entry["message"]
    assert entry["detail"].startswith("no recording rules in Prometheus")


def test_a_source_that_times_no_query_reports_none():
    entry = source_entry(SourceStatus("demo", Health.OK, since=0.0))
    assert entry["slowest_query"] is None
    unsized = SourceStatus("prometheus", Health.OK, since=0.0,
                           slowest=QueryTime("job:step", 0.2))
    assert source_entry(unsized)["slowest_query"]["bytes"] is None  # not known, not 0
