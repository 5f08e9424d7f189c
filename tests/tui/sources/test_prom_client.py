"""The PromQL client against a scripted HTTP server: answers, and failures by kind."""

from __future__ import annotations

import json

import pytest
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prom_client import PromClient, QueryError

from tests.tui.scripted_http import Scripted


def client(url: str, **prometheus) -> PromClient:
    settings = load_settings(overrides={"prometheus": {"url": url, **prometheus}},
                             environ={"RANKTOP_BEARER_TOKEN": "tok-secret"})
    return PromClient(settings.prometheus)


def vector(*samples) -> str:
    result = [{"metric": labels, "value": [1.0, str(value)]} for labels, value in samples]
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}})


def test_an_instant_vector_reads_as_samples_and_the_token_is_sent(server):
    Scripted.reply = (200, "application/json",
                      vector(({"gpu": "0"}, 61.5), ({"gpu": "1"}, "NaN")))
    samples = list(client(server).query("DCGM_FI_DEV_GPU_TEMP"))
    assert samples[0].labels == {"gpu": "0"} and samples[0].value == 61.5
    assert samples[1].value != samples[1].value  # NaN stays NaN: no data
    assert Scripted.seen["headers"]["Authorization"] == "Bearer tok-secret"


def test_http_errors_say_their_code_and_prometheus_reason(server):
    Scripted.reply = (503, "application/json", json.dumps(
        {"status": "error", "errorType": "timeout",
         "error": "query timed out in expression evaluation"}))
    with pytest.raises(QueryError) as caught:
        client(server).query("up")
    assert caught.value.kind == "HTTP 503"
    assert "query timed out" in caught.value.message


def test_a_malformed_answer_is_a_bad_answer(server):
    Scripted.reply = (200, "application/json",
                      json.dumps({"status": "success", "data": {"result": [{"x": 1}]}}))
    with pytest.raises(QueryError, match="bad answer"):
        list(client(server).query("up"))
    Scripted.reply = (200, "text/html", "<html>a login page</html>")
    with pytest.raises(QueryError, match="bad answer"):
        client(server).query("up")


def test_a_slow_server_times_out_with_the_configured_limit(server):
    Scripted.delay = 1.5
    Scripted.reply = (200, "application/json", vector())
    with pytest.raises(QueryError) as caught:
        client(server, timeout_seconds=0.5).query("up")
    assert caught.value.kind == "timed out" and "0.5 s" in caught.value.message


def test_nobody_listening_is_connection_refused_and_secrets_stay_out():
    with pytest.raises(QueryError) as caught:
        client("http://user:pw-secret@127.0.0.1:9").query("up")
    assert caught.value.kind == "connection refused"
    assert "pw-secret" not in str(caught.value) and "tok-secret" not in str(caught.value)
