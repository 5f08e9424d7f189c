"""The one HTTP client, against a scripted server: instant queries, range queries and
Alertmanager's alerts, and every failure of each as one error type, by kind, without secrets."""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.client import PromClient, QueryError
from ranktop.tui.sources.prometheus.decode import PARTIAL_FLAG, Notes, range_matrix

from tests.serving import serve_in_thread
from tests.tui.scripted_http import Scripted

SECRETS = ("tok-secret", "pw-secret", "url-secret")


def client(url: str, **prometheus) -> PromClient:
    settings = load_settings(overrides={"prometheus": {"url": url, **prometheus}},
                             environ={"RANKTOP_BEARER_TOKEN": "tok-secret"})
    return PromClient(settings.prometheus)


def vector(*samples) -> str:
    result = [{"metric": labels, "value": [1.0, str(value)]} for labels, value in samples]
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}})


def matrix(*series) -> str:
    result = [{"metric": labels, "values": points} for labels, points in series]
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}})


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# what a distributed backend is asked beside every recent query (a Prometheus ignores it)
DISTRIBUTED = {"max_source_resolution": "0s", "dedup": "true", "partial_response": "true"}


def form() -> dict[str, str]:
    return {key: values[0] for key, values in Scripted.seen["form"].items()}


# --- answers ----------------------------------------------------------------------------

def test_an_instant_vector_reads_as_samples_and_the_token_is_sent(server):
    Scripted.reply = (200, "application/json",
                      vector(({"gpu": "0"}, 61.5), ({"gpu": "1"}, "NaN")))
    samples = list(client(server).query("DCGM_FI_DEV_GPU_TEMP"))
    assert samples[0].labels == {"gpu": "0"} and samples[0].value == 61.5
    assert samples[1].value != samples[1].value  # NaN stays NaN: no data
    assert Scripted.seen["headers"]["Authorization"] == "Bearer tok-secret"
    assert Scripted.seen["headers"]["User-Agent"] == "ranktop"
    assert (Scripted.seen["method"], Scripted.seen["path"]) == ("POST", "/api/v1/query")
    assert form() == {"query": "DCGM_FI_DEV_GPU_TEMP", **DISTRIBUTED}


def test_a_range_query_gives_every_series_with_its_points(server):
    Scripted.reply = (200, "application/json", matrix(
        ({"gpu": "0"}, [[1800000000, "61"], [1800000004, "62.5"]]),
        ({"gpu": "1"}, [[1800000000, "NaN"]]),
    ))
    series = client(server).query_range("DCGM_FI_DEV_GPU_TEMP", 1_799_999_400, 1_800_000_000, 4)
    assert [s.labels for s in series] == [{"gpu": "0"}, {"gpu": "1"}]
    assert series[0].points == [(1_800_000_000.0, 61.0), (1_800_000_004.0, 62.5)]
    assert (Scripted.seen["method"], Scripted.seen["path"]) == ("POST", "/api/v1/query_range")
    # nocache: VictoriaMetrics keeps the start as given (else it moves a long range's)
    assert form() == {"query": "DCGM_FI_DEV_GPU_TEMP", "start": "1799999400",
                      "end": "1800000000", "step": "4", "nocache": "1", **DISTRIBUTED}


def test_an_instant_query_at_a_past_moment_sends_its_time(server):
    Scripted.reply = (200, "application/json", vector())
    client(server).query("up", at=1_800_000_000.25)
    assert form() == {"query": "up", "time": "1800000000.25", **DISTRIBUTED}


@pytest.mark.parametrize("labels", [{"gpu": "0"}, {"gpu": "0", "host": "nœud\u001b[2J"}])
@pytest.mark.parametrize("last", ["+Inf", "-Inf", "7"])
def test_range_values_read_the_same_on_either_decoding(server, labels, last):
    # plain ASCII and finite values take the fast way; anything else the general one
    body = matrix((labels, [[1800000000, "NaN"], [1800000002.5, "1e3"], [1800000004, last]]))
    fast = len(labels) == 1 and last != "+Inf"  # msgspec reads "-Inf", not "+Inf"
    assert (range_matrix(body.encode()) is not None) == fast
    Scripted.reply = (200, "application/json", body)
    series = client(server).query_range("up", 1_800_000_000, 1_800_000_004, 2)
    assert series[0].labels["gpu"] == "0" and "\x1b" not in str(series[0].labels)
    stamps, values = zip(*series[0].points, strict=True)
    assert stamps == (1_800_000_000.0, 1_800_000_002.5, 1_800_000_004.0)
    assert math.isnan(values[0]) and values[1:] == (1000.0, float(last))


def test_range_bounds_keep_their_fraction_of_a_second(server):
    Scripted.reply = (200, "application/json", matrix())
    assert client(server).query_range("up", 1_800_000_000.25, 1_800_000_600.5, 0.5) == []
    assert (form()["start"], form()["end"], form()["step"]) == (
        "1800000000.25", "1800000600.5", "0.5")


def test_metric_and_label_names_are_asked_for_by_get_since_a_time(server):
    Scripted.reply = (200, "application/json",
                      json.dumps({"status": "success", "data": ["up", "train_loss"]}))
    names = client(server).metric_names(1800000000.5)
    assert names == ["up", "train_loss"]
    assert (Scripted.seen["method"], Scripted.seen["path"]) == (
        "GET", "/api/v1/label/__name__/values")
    assert form() == {"start": "1800000000.5"}
    client(server).label_names('train_loss{job="a"}', 1800000000)
    assert Scripted.seen["path"] == "/api/v1/labels"
    assert form() == {"match[]": 'train_loss{job="a"}', "start": "1800000000"}


@pytest.mark.parametrize("data", [{"resultType": "vector"}, [1, 2], "up"])
def test_names_that_are_not_a_list_of_strings_are_a_bad_answer(server, data):
    Scripted.reply = (200, "application/json", json.dumps({"status": "success", "data": data}))
    with pytest.raises(QueryError) as raised:
        client(server).metric_names(0)
    assert raised.value.kind == "bad answer"


def test_a_partial_answer_keeps_the_servers_warnings(server):
    body = json.loads(vector(({"gpu": "0"}, 61)))
    body["warnings"] = ["store 10.0.0.4:10901 unreachable", "2", "3", "4"]
    Scripted.reply = (200, "application/json", json.dumps(body))
    answer = client(server).query("up")
    assert answer.notes.partial == ("store 10.0.0.4:10901 unreachable", "2", "3")  # a few
    Scripted.reply = (200, "application/json", vector(({"gpu": "0"}, 61)))
    assert client(server).query("up").notes == Notes()


@pytest.mark.parametrize("fast", [True, False], ids=["plain", "read the general way"])
def test_victoria_metrics_clusters_is_partial_flag_marks_the_answer_partial(server, fast):
    body = json.loads(vector(({"gpu": "0" if fast else "g\u00e9"}, 61)))
    body["isPartial"] = True
    Scripted.reply = (200, "application/json", json.dumps(body))
    assert client(server).query("up").notes.partial == (PARTIAL_FLAG,)
    body["isPartial"] = False
    Scripted.reply = (200, "application/json", json.dumps(body))
    assert client(server).query("up").notes == Notes()


def test_prometheus_3s_infos_are_kept_to_show_and_leave_the_answer_whole(server):
    body = json.loads(vector(({"gpu": "0"}, 61)))
    body["infos"] = ['PromQL info: metric might not be a counter, name does not end in '
                     '_total/_sum/_count/_bucket: "up"']
    Scripted.reply = (200, "application/json", json.dumps(body))
    notes = client(server).query("up").notes
    assert notes.partial == () and notes.infos[0].startswith("PromQL info: metric might")


def test_a_warning_from_the_server_is_plain_text(server):
    body = json.loads(vector(({"gpu": "0"}, 61)))
    body["warnings"] = ["store \x1b]52;c;b3duZWQ=\x07 down"]
    Scripted.reply = (200, "application/json", json.dumps(body))
    [warning] = client(server).query("up").notes.partial
    assert "\x1b" not in warning and "\x07" not in warning and warning.startswith("store ")


def test_a_tenant_is_sent_as_the_scope_header_under_a_path_prefix(server):
    Scripted.reply = (200, "application/json", vector())
    client(f"{server}/prometheus", tenant="team-a").query("up")
    assert Scripted.seen["path"] == "/prometheus/api/v1/query"
    assert Scripted.seen["headers"]["X-Scope-OrgID"] == "team-a"
    client(server).query("up")
    assert "X-Scope-OrgID" not in Scripted.seen["headers"]


def test_latency_offset_asks_victoria_metrics_for_its_newest_samples(server):
    Scripted.reply = (200, "application/json", vector())
    client(server, latency_offset="1s").query("up")
    assert form() == {"query": "up", "latency_offset": "1s", "nocache": "1", **DISTRIBUTED}
    Scripted.reply = (200, "application/json", matrix())
    client(server, latency_offset="1s").query_range("up", 0, 10, 1)
    assert form()["nocache"] == "1"


def test_a_distributed_backend_is_asked_raw_recent_data_and_what_the_user_chose(server):
    Scripted.reply = (200, "application/json", matrix())
    client(server).query_range("up", 0, 10, 1)  # long past: what the store holds
    assert form()["max_source_resolution"] == "auto"
    Scripted.reply = (200, "application/json", vector())
    client(server, partial_response=False, dedup=False,
           replica_labels=["replica", "prometheus_replica"]).query("up")
    sent = Scripted.seen["form"]
    assert form()["partial_response"] == "false" and form()["deny_partial_response"] == "1"
    assert form()["dedup"] == "false"
    assert sent["replicaLabels[]"] == ["replica", "prometheus_replica"]


def test_victoria_metrics_is_known_by_the_header_it_answers_with(server):
    Scripted.reply = (200, "application/json", vector())
    plain = client(server)
    plain.query("up")
    assert plain.backend == ""
    Scripted.headers = {"X-Server-Hostname": "vm-0"}
    victoria = client(server)
    victoria.query("up")
    assert victoria.backend == "VictoriaMetrics"


def test_alertmanager_alerts_are_asked_for_with_silenced_and_inhibited(server):
    alerts = [{"labels": {"alertname": "X"}, "status": {"state": "active"}}]
    Scripted.reply = (200, "application/json", json.dumps(alerts))
    assert client(server).alertmanager_alerts(server + "/", timeout=2) == alerts
    assert (Scripted.seen["method"], Scripted.seen["path"]) == ("GET", "/api/v2/alerts")
    assert form() == {"active": "true", "silenced": "true", "inhibited": "true"}
    assert Scripted.seen["headers"]["Authorization"] == "Bearer tok-secret"


def test_basic_auth_is_sent_when_a_username_is_set(server, tmp_path):
    (tmp_path / "password").write_text("pw-secret\n")
    Scripted.reply = (200, "application/json", "[]")
    with client(server, username="oncall",
                password_file=str(tmp_path / "password")) as basic:
        basic.alertmanager_alerts(server, timeout=2)
    assert Scripted.seen["headers"]["Authorization"].startswith("Basic ")


# --- failures: every call kind, one error type ------------------------------------------

def instant(url: str, timeout: float = 2) -> object:
    return list(client(url, timeout_seconds=timeout).query("up"))


def ranged(url: str, timeout: float = 2) -> object:
    return client(url, timeout_seconds=timeout).query_range("up", 0, 60, 15)


def alertmanager(url: str, timeout: float = 2) -> object:
    return client("http://prometheus.invalid:9090").alertmanager_alerts(url, timeout)


EVERY_CALL = pytest.mark.parametrize("call", [instant, ranged, alertmanager])


def failure(call, url: str, **kwargs) -> QueryError:
    with pytest.raises(QueryError) as caught:
        call(url, **kwargs)
    assert type(caught.value) is QueryError  # one error type, whatever the call
    return caught.value


@EVERY_CALL
def test_nobody_listening_is_connection_refused_and_names_the_url_without_secrets(call):
    url = f"http://oncall:url-secret@127.0.0.1:{closed_port()}"
    error = failure(call, url)
    assert error.kind == "connection refused"
    # Prometheus's settings took it out of the URL; a URL the client is handed is cleaned
    shown = "" if call in (instant, ranged) else "***@"
    assert error.message == url.replace("oncall:url-secret@", shown)


@EVERY_CALL
def test_a_slow_server_times_out_with_the_limit_it_was_given(call, server):
    Scripted.delay = 1.5
    Scripted.reply = (200, "application/json", "[]")
    error = failure(call, server, timeout=0.5)
    assert (error.kind, error.message) == ("timed out", "no answer in 0.5 s")


@EVERY_CALL
def test_an_http_error_says_its_code_and_first_line(call, server):
    Scripted.reply = (502, "text/plain", "bad gateway: upstream down\n<details>")
    error = failure(call, server)
    assert (error.kind, error.message) == ("HTTP 502", "bad gateway: upstream down")


def test_prometheus_errors_give_prometheus_reason(server):
    Scripted.reply = (503, "application/json", json.dumps(
        {"status": "error", "errorType": "timeout",
         "error": "query timed out in expression evaluation"}))
    error = failure(instant, server)
    assert (error.kind, error.message) == ("HTTP 503", "query timed out in expression evaluation")


@EVERY_CALL
@pytest.mark.parametrize("body", ["<html><body>Sign in</body></html>", '{"data": 3}',
                                  '{"status": "success", "data": {"result": [{"x": 1}]}}'])
def test_html_or_a_wrong_shape_is_a_bad_answer(call, body, server):
    Scripted.reply = (200, "text/html", body)
    assert failure(call, server).kind == "bad answer"


@EVERY_CALL
def test_https_to_a_plain_http_server_is_a_tls_failure(call, server):
    assert failure(call, server.replace("http://", "https://")).kind == "TLS"


@EVERY_CALL
def test_a_ca_bundle_that_is_not_one_is_a_tls_failure_not_a_crash(call, server, tmp_path):
    (tmp_path / "ca.pem").write_text("not a certificate\n")
    settings = load_settings(overrides={"prometheus": {
        "url": server, "ca_bundle": str(tmp_path / "ca.pem")}}, environ={})
    broken = PromClient(settings.prometheus)
    calls = {instant: lambda: broken.query("up"), ranged: lambda: broken.query_range("up", 0, 1, 1),
             alertmanager: lambda: broken.alertmanager_alerts(server, 2)}
    with pytest.raises(QueryError) as caught:
        calls[call]()
    assert caught.value.kind == "TLS"


@pytest.mark.parametrize("call", [instant, ranged])
def test_no_prometheus_url_is_not_configured(call):
    assert failure(call, "").kind == "not configured"


# --- secrets ----------------------------------------------------------------------------

@EVERY_CALL
@pytest.mark.parametrize("reply", [
    (500, "text/plain", "denied: tok-secret pw-secret http://me:url-secret@proxy/"),
    (401, "application/json", '{"status": "error", "error": "bad token tok-secret"}'),
])
def test_no_message_ever_holds_a_secret(call, reply, server, tmp_path):
    """The bearer token, the password and a URL's password stay out, even when the server
    echoes them back."""
    (tmp_path / "password").write_text("pw-secret\n")
    Scripted.reply = reply
    url = server.replace("http://", "http://me:url-secret@")  # as an Alertmanager is asked
    settings = load_settings(overrides={"prometheus": {
        "url": server, "username": "me", "password_file": str(tmp_path / "password")}},
        environ={"RANKTOP_BEARER_TOKEN": "tok-secret"})
    secretive = PromClient(settings.prometheus)
    calls = {instant: lambda: secretive.query("up"),
             ranged: lambda: secretive.query_range("up", 0, 1, 1),
             alertmanager: lambda: secretive.alertmanager_alerts(url, 2)}
    with pytest.raises(QueryError) as caught:
        calls[call]()
    assert caught.value.kind == f"HTTP {reply[0]}"
    assert "***" in str(caught.value)
    assert not [secret for secret in SECRETS if secret in str(caught.value)]


def test_requests_reuse_the_clients_worker_threads(server, monkeypatch):
    """Twenty queries run in at most WORKERS threads: none is started per request."""
    import threading

    from ranktop.tui.sources.prometheus import client as prom_client

    Scripted.reply = (200, "application/json", vector(({"gpu": "0"}, 1.0)))
    threads: list[threading.Thread] = []
    exchange = PromClient._exchange

    def seen(self, *args, **kwargs):
        threads.append(threading.current_thread())
        return exchange(self, *args, **kwargs)

    monkeypatch.setattr(PromClient, "_exchange", seen)
    asker = client(server)
    for _ in range(20):
        asker.query("up")
    assert len(threads) == 20
    assert len({id(thread) for thread in threads}) <= prom_client.WORKERS


class HangingRanges(BaseHTTPRequestHandler):
    """Range queries never answer (until ``release``); an instant query sends its headers at
    once and its body ``body_after`` seconds later."""

    protocol_version = "HTTP/1.1"
    release = threading.Event()
    body_after = 0.7

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.endswith("/query_range"):
            HangingRanges.release.wait(10)
            self.close_connection = True
            return
        body = vector(({"rank": "0"}, 1)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.flush()
        time.sleep(self.body_after)
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_a_request_that_times_out_closes_no_other_requests_connection():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), HangingRanges)
    httpd.daemon_threads = True
    serve_in_thread(httpd)
    shared = client(f"http://127.0.0.1:{httpd.server_address[1]}", timeout_seconds=1.0)
    timed_out: list[QueryError] = []

    def ranged_query() -> None:
        with pytest.raises(QueryError) as caught:
            shared.query_range("up", 0, 60, 15)
        timed_out.append(caught.value)

    try:
        hanging = threading.Thread(target=ranged_query)
        hanging.start()
        time.sleep(0.6)  # the instant query's body comes 0.3 s after the range times out
        answer = shared.query("up")
        hanging.join()
        assert timed_out[0].kind == "timed out"
        assert [sample.value for sample in answer] == [1.0]
        assert [sample.value for sample in shared.query("up")] == [1.0]  # and after it
    finally:
        HangingRanges.release.set()
        shared.close()
        httpd.shutdown()
