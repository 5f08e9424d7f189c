"""Hostile answers to the one HTTP client: whatever a label, an alert or an error page holds,
what leaves the client is plain text, and no credential is echoed back."""

from __future__ import annotations

import base64
import gc
import json
import re
import tracemalloc

import msgspec
import pytest
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus import decode as prom_decode
from ranktop.tui.sources.prometheus.client import PromClient, QueryError
from ranktop.tui.sources.prometheus.decode import LABEL_VALUE_CHARS

from tests.tui.scripted_http import Scripted
from tests.tui.sources.prometheus.test_client import matrix, vector

# What a job owner can put in its own labels (json.dumps keeps them as \u escapes).
ESCAPES = {
    "osc52": "\x1b]52;c;b3duZWQ=\x07", "title": "\x1b]2;pwned\x1b\\", "clear": "\x1b[2J\x1b[H",
    "osc8": "\x1b]8;;https://evil.example\x07link\x1b]8;;\x07", "c1": "\x9b31m\x9d0;t\x9c",
    "bidi": "\u202eevil\u2066", "nul": "a\x00b", "del": "a\x7fb", "surrogate": "\ud800",
    "newline": "a\nb\rc",
}
LONGEST = LABEL_VALUE_CHARS + 60  # a value cut, and its note
UNSAFE = set(map(chr, [*range(0x20), *range(0x7f, 0xa0), 0x202e, 0x2066, 0xd800]))


def assert_plain(text: str) -> None:
    assert not UNSAFE & set(text), repr(text)


def client(url: str, **prometheus) -> PromClient:
    settings = load_settings(overrides={"prometheus": {"url": url, **prometheus}}, environ={})
    return PromClient(settings.prometheus)


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_label_values_and_names_come_out_plain(server, name):
    hostile = ESCAPES[name]
    Scripted.reply = (200, "application/json",
                      vector(({"Hostname": f"gpu-{hostile}-1", f"x{hostile}": "v"}, 1)))
    [sample] = list(client(server).query("up"))
    for key, value in sample.labels.items():
        assert_plain(key)
        assert_plain(value)
    assert sample.labels["Hostname"].startswith("gpu-") and "\ufffd" in sample.labels["Hostname"]
    Scripted.reply = (200, "application/json", matrix(({"h": hostile}, [[1, "2"]])))
    [series] = client(server).query_range("up", 0, 1, 1)
    assert_plain(series.labels["h"])


def test_a_megabyte_label_value_is_cut_with_a_note(server):
    Scripted.reply = (200, "application/json", vector(({"Hostname": "é" * 1_000_000}, 1)))
    [sample] = list(client(server).query("up"))
    assert len(sample.labels["Hostname"]) < LONGEST
    assert re.search(r"… \[\d+ more characters, #[0-9a-f]{12}\]$", sample.labels["Hostname"])


def test_a_label_that_is_not_a_string_becomes_one(server):
    Scripted.reply = (200, "application/json", json.dumps({"status": "success", "data": {
        "resultType": "vector", "result": [{"metric": {"rank": 3, "é": None},
                                            "value": [1, "1"]}]}}))
    [sample] = list(client(server).query("up"))
    assert sample.labels == {"rank": "3", "é": "None"}


def test_alert_labels_and_annotations_come_out_plain(server):
    alert = {"labels": {"alertname": "Hot\x1b[2J"}, "annotations": {
        "summary": "\x1b]52;c;b3duZWQ=\x07[@click=app.quit]Ack[/]"},
        "status": {"state": "active"}, "startsAt": "2026-01-01T00:00:00Z"}
    Scripted.reply = (200, "application/json", json.dumps([alert]))
    [got] = client(server).alertmanager_alerts(server, 5)
    assert_plain(got["labels"]["alertname"])
    assert_plain(got["annotations"]["summary"])
    assert got["annotations"]["summary"].endswith("[@click=app.quit]Ack[/]")  # text, kept


@pytest.mark.parametrize("body", [
    "<html>\x1b]52;c;b3duZWQ=\x07 bad gateway</html>",
    json.dumps({"status": "error", "error": "\x1b[2J\x9b2J wiped"}),
])
def test_an_error_body_comes_out_plain(server, body):
    Scripted.reply = (502, "text/html", body)
    with pytest.raises(QueryError) as caught:
        client(server).query("up")
    assert_plain(str(caught.value))
    assert caught.value.kind == "HTTP 502"


def test_a_200_with_status_error_is_a_failed_query_that_says_why(server):
    Scripted.reply = (200, "application/json",
                      json.dumps({"status": "error", "errorType": "execution",
                                  "error": "query timed out in expression evaluation"}))
    with pytest.raises(QueryError) as caught:
        client(server).query("up")
    assert caught.value.kind == "query failed"
    assert "timed out in expression evaluation" in str(caught.value)


def test_a_401_page_echoing_the_basic_auth_header_shows_no_credential(server):
    echoed = base64.b64encode(b"alice:pw-secret").decode()
    Scripted.reply = (401, "text/plain", f"denied: Authorization: Basic {echoed}")
    made = PromClient(load_settings(
        overrides={"prometheus": {"url": server, "username": "alice"}},
        environ={"RANKTOP_PASSWORD": "pw-secret"}).prometheus)
    with pytest.raises(QueryError) as caught:
        made.query("up")
    assert Scripted.seen["headers"]["Authorization"] == f"Basic {echoed}"  # it was sent
    assert echoed not in str(caught.value) and "pw-secret" not in str(caught.value)
    assert "***" in str(caught.value)


def test_a_url_with_a_password_is_shown_without_it():
    from ranktop.tui.sources.prometheus.client import shown_url
    from ranktop.tui.sources.prometheus.source import PrometheusSource

    url = "http://alice:pw-secret@prometheus.example:9090"
    assert shown_url(url) == "http://***@prometheus.example:9090"
    source = PrometheusSource(load_settings(overrides={"prometheus": {"url": url}}, environ={}))
    assert "pw-secret" not in source.name and "pw-secret" not in source.status().name


@pytest.mark.parametrize("name", sorted(set(ESCAPES) - {"surrogate"}))  # no UTF-8 for it
def test_labels_sent_unescaped_come_out_plain_or_not_at_all(server, name):
    """The same labels as raw UTF-8 in the JSON, as a server may send them: plain, or a bad
    answer where the JSON itself is broken (a raw control character in a string)."""
    hostile = ESCAPES[name]
    result = [{"metric": {"Hostname": f"gpu-{hostile}-1", f"x{hostile}": "v"}, "value": [1, "1"]}]
    Scripted.reply = (200, "application/json", json.dumps(
        {"status": "success", "data": {"resultType": "vector", "result": result}},
        ensure_ascii=False))
    try:
        [sample] = list(client(server).query("up"))
    except QueryError as error:
        assert error.kind == "bad answer"
        return
    for key, value in sample.labels.items():
        assert_plain(key)
        assert_plain(value)


def test_a_long_plain_label_value_is_cut_with_a_note_too(server):
    Scripted.reply = (200, "application/json", vector(({"Hostname": "x" * 100_000}, 1)))
    [sample] = list(client(server).query("up"))
    assert re.search(r"… \[98976 more characters, #[0-9a-f]{12}\]$", sample.labels["Hostname"])


def test_megabyte_label_values_are_cut_while_decoding_not_after(server):
    """16 label values of 2 MB: decoded whole they would be strings as large as the body
    (after the body's own text); cut while decoding, only the body is ever held."""
    body = vector(*(({"Hostname": "x" * 2_000_000, "rank": str(i)}, 1) for i in range(16)))
    Scripted.reply = (200, "application/json", body)
    asking = client(server)
    samples = []

    def ask() -> None:
        samples.extend(asking.query("up"))

    gc.collect()
    tracemalloc.start()
    try:
        ask()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [s.labels["rank"] for s in samples] == [str(i) for i in range(16)]
    assert all(len(s.labels["Hostname"]) < LONGEST for s in samples)
    assert f"… [{2_000_000 - LABEL_VALUE_CHARS} more characters, #" in samples[0].labels[
        "Hostname"]
    # the body, and its copy while it is read, give or take what the test server in this
    # process holds while it sends (decoded whole, as before: 3x)
    assert peak < 2.7 * len(body), peak / len(body)


@pytest.mark.parametrize("written", ["é", "\\u00e9", "\\ud83d\\ude00", "a\\\"", "\\\\"])
def test_a_long_value_is_cut_between_characters_however_they_are_written(written):
    raw = msgspec.Raw(('"' + written * 100_000 + '"').encode())
    text = prom_decode.label_value(raw)
    head, _, note = text.partition("… [")
    assert len(head) == LABEL_VALUE_CHARS and note.endswith("]")
    assert head == json.loads('"' + written * 2000 + '"')[:LABEL_VALUE_CHARS]


def test_a_lone_surrogate_in_a_long_answer_is_no_bad_answer(server):
    result = [{"metric": {"Hostname": "x\ud800y", "UUID": "\udc00" + "z" * 5000},
               "value": [1, "1"]}]
    Scripted.reply = (200, "application/json", json.dumps(
        {"status": "success", "data": {"resultType": "vector", "result": result}}))
    [sample] = list(client(server).query("up"))
    assert sample.labels["Hostname"] == "x\ufffdy"
    assert sample.labels["UUID"].startswith("\ufffdzzz")
