"""A rank's alert history: label matching, Prometheus intervals, Alertmanager alerts and
ranktop's own events, against a scripted HTTP server. (Failures by kind, and secrets kept out
of them, are the client's: test_prom_client.py.)"""

from __future__ import annotations

import hashlib
import json
import socket
from dataclasses import replace

import pytest
from ranktop.tui.core.events import Event
from ranktop.tui.core.model import Rank
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.alerts import (
    AlertRecord,
    alert_matches,
    alertmanager_alerts,
    merge,
    parse_time,
    prometheus_history,
    ranktop_history,
)
from ranktop.tui.sources.prometheus.client import QueryError

from tests.tui.scripted_http import Scripted

NOW = 1_800_000_000.0
UUID = "GPU-3f1c9a2e-7b44-4c1d-9e0a-5d2b8c6f1a37"
RANK = Rank(rank=37, host="gpu-node-004", gpu=5, node=4, uuid=UUID)
NEIGHBOUR = Rank(rank=36, host="gpu-node-004", gpu=4, node=4, uuid="GPU-0000-other")


def settings(url: str = "", **prometheus):
    return load_settings(overrides={"prometheus": {"url": url, **prometheus}},
                         environ={"RANKTOP_BEARER_TOKEN": "tok-secret"})


LABELS = settings().ranks  # the job's rank and uuid labels: "rank", "gpu_uuid"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- matching ---------------------------------------------------------------------------

@pytest.mark.parametrize("labels", [
    {"Hostname": "gpu-node-004", "gpu": "5"},
    {"hostname": "gpu-node-004", "gpu": "5"},
    {"exported_pod": "gpu-node-004", "gpu": "5"},
    {"pod": "gpu-node-004", "gpu": "5"},
    {"UUID": UUID, "gpu": "0", "Hostname": "renamed-host"},
    {"uuid": UUID},  # dcgm-exporter's old label names
    {"gpu_uuid": UUID, "training_job": "llama"},  # the job's own metrics
    {"rank": "37", "training_job": "llama"},
])
def test_each_label_spelling_ties_an_alert_to_its_rank(labels):
    assert alert_matches({"alertname": "X", **labels}, RANK, LABELS)


def test_the_jobs_own_rank_and_uuid_labels_come_from_the_settings():
    mine = replace(LABELS, rank_label="global_rank", uuid_label="device_uuid")
    assert alert_matches({"global_rank": "37"}, RANK, mine)
    assert alert_matches({"device_uuid": UUID}, RANK, mine)
    assert not alert_matches({"rank": "37"}, RANK, mine)
    assert not alert_matches({"gpu_uuid": UUID}, RANK, mine)


@pytest.mark.parametrize("labels", [
    {"Hostname": "gpu-node-004", "gpu": "4"},  # the neighbouring GPU on the same host
    {"Hostname": "gpu-node-004"},  # a host-wide alert names no GPU
    {"Hostname": "gpu-node-005", "gpu": "5"},
    {"UUID": "GPU-0000-other"},
    {"rank": "36"},
    {"training_job": "llama", "severity": "critical"},  # job-wide
    {},
])
def test_other_ranks_and_job_wide_alerts_do_not_match(labels):
    assert not alert_matches({"alertname": "X", **labels}, RANK, LABELS)


# --- Prometheus -------------------------------------------------------------------------

def matrix(*series) -> str:
    result = [{"metric": labels, "values": [[t, "1"] for t in stamps]} for labels, stamps in series]
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}})


def alert(name: str, state: str, **labels) -> dict:
    return {"__name__": "ALERTS", "alertname": name, "alertstate": state, **labels}


def steps(first: float, last: float, step: float = 15) -> list[float]:
    return [first + i * step for i in range(int((last - first) // step) + 1)]


def test_alert_samples_become_intervals_a_long_gap_ends_one(server):
    hot = {"Hostname": "gpu-node-004", "gpu": "5", "UUID": UUID, "severity": "warning"}
    Scripted.reply = (200, "application/json", matrix(
        (alert("GPUTemperatureHigh", "pending", **hot), steps(NOW - 900, NOW - 855)),
        (alert("GPUTemperatureHigh", "firing", **hot),
         steps(NOW - 840, NOW - 600) + steps(NOW - 570, NOW - 450) + steps(NOW - 120, NOW)),
        (alert("GPUTemperatureHigh", "firing", Hostname="gpu-node-004", gpu="4"),
         steps(NOW - 900, NOW)),
    ))
    records = prometheus_history(settings(server), RANK, 900, NOW, step=15)
    assert [(r.state, r.time, r.end) for r in records] == [
        ("pending", NOW - 900, NOW - 855),
        ("firing", NOW - 840, NOW - 450),  # one missed evaluation (30 s) does not split
        ("firing", NOW - 120, None),  # still firing at the end of the window
    ]
    assert {(r.name, r.source, r.severity) for r in records} == {
        ("GPUTemperatureHigh", "prometheus", "warning")}


def test_the_range_query_asks_for_the_ranks_alerts_over_the_window(server):
    Scripted.reply = (200, "application/json", matrix())
    assert prometheus_history(settings(server), RANK, 3600, NOW, step=30) == []
    form = {key: values[0] for key, values in Scripted.seen["form"].items()}
    assert Scripted.seen["path"] == "/api/v1/query_range"
    assert (form["start"], form["end"], form["step"]) == (str(int(NOW) - 3600), str(int(NOW)),
                                                          "30")
    assert 'ALERTS{Hostname="gpu-node-004",gpu="5",alertstate=~"firing|pending"}' in (
        form["query"])
    assert f'ALERTS{{UUID="{UUID}",alertstate' in form["query"]
    assert 'ALERTS{rank="37",alertstate' in form["query"]
    assert Scripted.seen["headers"]["Authorization"] == "Bearer tok-secret"


# --- Alertmanager -----------------------------------------------------------------------

def am_alert(labels, state, starts, ends, summary="", silenced=(), inhibited=()) -> dict:
    return {
        "labels": labels,
        "annotations": {"summary": summary, "runbook_url": "https://runbooks.example/gpu"},
        "receivers": [{"name": "gpu-oncall"}],
        "fingerprint": hashlib.sha1(json.dumps(labels, sort_keys=True).encode()).hexdigest()[:16],
        "startsAt": starts,
        "updatedAt": "2027-01-15T08:05:31.412Z",
        "endsAt": ends,
        "generatorURL": "http://prometheus:9090/graph?g0.expr=DCGM_FI_DEV_GPU_TEMP+%3E+82",
        "status": {"state": state, "silencedBy": list(silenced),
                   "inhibitedBy": list(inhibited), "mutedBy": []},
    }


AM_ANSWER = [
    am_alert({"alertname": "GPUTemperatureHigh", "Hostname": "gpu-node-004", "gpu": "5",
              "UUID": UUID, "severity": "warning"}, "active",
             "2027-01-15T08:01:30.123456789Z", "2027-01-15T08:09:30.123456789Z",
             summary="GPU 5 on gpu-node-004 is at 88 °C"),
    am_alert({"alertname": "GPUXIDError", "UUID": UUID, "severity": "critical"}, "suppressed",
             "2027-01-15T07:50:00+01:00", "2027-01-15T06:55:00.5+00:00",
             summary="", silenced=["6f1c2a3e-1d2b-4c5d-8e9f-0a1b2c3d4e5f"]),
    am_alert({"alertname": "TrainingStraggler", "rank": "37", "training_job": "llama"},
             "unprocessed", "2027-01-15T08:04:00Z", "2027-01-15T08:12:00Z"),
    am_alert({"alertname": "GPUTemperatureHigh", "Hostname": "gpu-node-004", "gpu": "4"},
             "active", "2027-01-15T08:00:00Z", "2027-01-15T08:10:00Z"),
    am_alert({"alertname": "TrainingStalled", "training_job": "llama"}, "active",
             "2027-01-15T08:00:00Z", "2027-01-15T08:10:00Z"),
]
AM_NOW = parse_time("2027-01-15T08:06:00Z")


def test_alertmanager_alerts_are_parsed_and_matched(server):
    Scripted.reply = (200, "application/json", json.dumps(AM_ANSWER))
    records = alertmanager_alerts(server, settings(server), RANK, now=AM_NOW)
    assert [(r.name, r.state) for r in records] == [
        ("GPUTemperatureHigh", "firing"), ("GPUXIDError", "suppressed"),
        ("TrainingStraggler", "unprocessed")]
    hot, xid, _ = records
    assert hot.time == pytest.approx(AM_NOW - 270 + 0.123456789)
    assert hot.end is None  # endsAt in the future: still active
    assert hot.summary == "GPU 5 on gpu-node-004 is at 88 °C" and hot.source == "alertmanager"
    assert xid.time == AM_NOW - 76 * 60
    assert xid.end == AM_NOW - 71 * 60 + 0.5
    form = {key: values[0] for key, values in Scripted.seen["form"].items()}
    assert Scripted.seen["path"] == "/api/v2/alerts"
    assert form == {"active": "true", "silenced": "true", "inhibited": "true"}
    assert Scripted.seen["headers"]["Authorization"] == "Bearer tok-secret"


@pytest.mark.parametrize(("text", "expected"), [
    ("2027-01-15T08:06:00Z", AM_NOW),
    ("2027-01-15T08:06:00.000000001Z", AM_NOW + 1e-9),
    ("2027-01-15T10:06:00+02:00", AM_NOW),
    ("2027-01-15t08:06:00.25z", AM_NOW + 0.25),
])
def test_rfc3339_times_parse_with_any_precision_and_offset(text, expected):
    assert parse_time(text) == pytest.approx(expected, abs=1e-6)
    with pytest.raises(ValueError):
        parse_time("yesterday")


# --- failures reach the caller as the client's one error -------------------------------

def test_either_source_unreachable_is_the_clients_error():
    url = f"http://oncall:pw-secret@127.0.0.1:{closed_port()}"
    for fetch in (lambda: prometheus_history(settings(url), RANK, 600, NOW),
                  lambda: alertmanager_alerts(url, settings(url), RANK, timeout=0.5)):
        with pytest.raises(QueryError) as caught:
            fetch()
        assert caught.value.kind == "connection refused"
        assert "pw-secret" not in str(caught.value)


def test_no_prometheus_url_is_not_configured():
    with pytest.raises(QueryError, match="not configured"):
        prometheus_history(settings(), RANK, 600, NOW)


def test_an_alert_without_its_fields_is_a_bad_answer(server):
    Scripted.reply = (200, "application/json", json.dumps([{"labels": {"rank": "37"}}]))
    with pytest.raises(QueryError) as caught:
        alertmanager_alerts(server, settings(server), RANK)
    assert (caught.value.kind, caught.value.message) == (
        "bad answer", "not an Alertmanager v2 alerts list")


# --- ranktop's own events, and the merged list ------------------------------------------

def event(at: float, state: str, kind: str, rank: int | None, summary: str = "") -> Event:
    host, gpu = ("gpu-node-004", rank % 8) if rank is not None else ("", None)
    return Event(time=at, state=state, kind=kind, severity="major", rank=rank, host=host,
                 gpu=gpu, job="llama", summary=summary)


def test_ranktop_history_keeps_the_ranks_own_events():
    events = [event(NOW - 300, "start", "thermal", 37, "88 °C, HW thermal slowdown"),
              event(NOW - 200, "start", "thermal", 36),
              event(NOW - 100, "start", "stall", None),
              event(NOW - 60, "resolve", "thermal", 37, "back to 70 °C")]
    assert ranktop_history(events, RANK) == [
        AlertRecord(NOW - 300, "thermal", "start", "major", "ranktop",
                    "88 °C, HW thermal slowdown"),
        AlertRecord(NOW - 60, "thermal", "resolve", "major", "ranktop", "back to 70 °C"),
    ]


def test_merge_puts_the_newest_first_across_sources():
    def record(at: float, source: str) -> AlertRecord:
        return AlertRecord(at, "x", "firing", "", source)

    merged = merge([record(10, "prometheus"), record(40, "prometheus")],
                   (record(30, "alertmanager"),), iter([record(20, "ranktop")]), [])
    assert [(r.time, r.source) for r in merged] == [
        (40, "prometheus"), (30, "alertmanager"), (20, "ranktop"), (10, "prometheus")]
