"""A fault proxy: a small HTTP server between ranktop and a real server, switchable per test.

``FaultProxy(upstream)`` passes every request through until a test sets ``fault`` to one
of ``FAULTS``; it counts the requests it saw, so a test can tell hammering from backoff.
The same proxy stands in front of Alertmanager (``upstream`` a fake one, or ``alerts`` set).
A process other than the test's switches the fault with a GET of ``CONTROL`` + its name.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.serving import serve_in_thread

# Label values that would do harm if they reached a terminal raw.
TERMINAL_ESCAPES = {
    "csi": "\x1b[2J\x1b[H",
    "osc52": "\x1b]52;c;b3duZWQ=\x07",
    "title": "\x1b]2;pwned\x1b\\",
    "osc8": "\x1b]8;;https://evil.example\x07link\x1b]8;;\x07",
    "c1": "\x9b2J\x9d0;t\x9c",
    "bidi": "\u202eevil\u2066",
    "nul": "a\x00b",
}


CONTROL = "/__fault/"  # GET CONTROL + name sets the fault, for a test's other process


class FaultProxy:
    """Forwards to ``upstream`` (http://host:port) with the fault of the moment."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.fault = "pass"
        self.retry_after = "2"
        self.requests = 0
        self.release = threading.Event()  # set to end a "hang" at once
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        serve_in_thread(self._server)

    def set(self, fault: str) -> None:
        assert fault in FAULTS, fault
        self.fault = fault
        self.release.set() if fault == "pass" else self.release.clear()

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes on a kept-alive connection: with Nagle
            # on, the body waits for the client's delayed ACK, 40 ms on every request.
            disable_nagle_algorithm = True

            def do_GET(self) -> None:
                self._serve(b"")

            def do_POST(self) -> None:
                self._serve(self.rfile.read(int(self.headers.get("Content-Length", 0))))

            def _serve(self, body: bytes) -> None:
                if self.path.startswith(CONTROL):  # another process switching the fault
                    proxy.set(self.path.removeprefix(CONTROL))
                    reply(self, 200, b"{}")
                    return
                proxy.requests += 1
                FAULTS[proxy.fault](proxy, self, body)

            def log_message(self, *args) -> None:
                pass

        return Handler

    # -- what a fault uses -------------------------------------------------------------

    def forward(self, handler: BaseHTTPRequestHandler, body: bytes) -> tuple[int, bytes]:
        """The upstream's answer to the request ``handler`` holds."""
        request = urllib.request.Request(
            self.upstream + handler.path, data=body if handler.command == "POST" else None,
            method=handler.command,
            headers={k: v for k, v in handler.headers.items()
                     if k.lower() in ("content-type", "authorization")})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def upstream_json(self, handler, body: bytes) -> dict:
        return json.loads(self.forward(handler, body)[1])


def reply(handler: BaseHTTPRequestHandler, status: int, body: bytes,
          content_type: str = "application/json", headers: dict | None = None,
          length: int | None = None) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body) if length is None else length))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    with contextlib.suppress(OSError):
        handler.wfile.write(body)


def _pass(proxy: FaultProxy, handler, body: bytes) -> None:
    status, answer = proxy.forward(handler, body)
    reply(handler, status, answer)


def _delay(seconds: float) -> Callable:
    def fault(proxy: FaultProxy, handler, body: bytes) -> None:
        proxy.release.wait(seconds)
        _pass(proxy, handler, body)
    return fault


def _hang(proxy: FaultProxy, handler, body: bytes) -> None:
    proxy.release.wait(120)  # never answers while the fault lasts
    handler.close_connection = True


def _status(code: int) -> Callable:
    def fault(proxy: FaultProxy, handler, body: bytes) -> None:
        headers = {"Retry-After": proxy.retry_after} if code in (429, 503) else {}
        page = json.dumps({"status": "error", "error": f"upstream says {code}"}).encode()
        reply(handler, code, page, headers=headers)
    return fault


def _truncated(proxy: FaultProxy, handler, body: bytes) -> None:
    status, answer = proxy.forward(handler, body)
    reply(handler, status, answer[: len(answer) // 2])


def _reset(proxy: FaultProxy, handler, body: bytes) -> None:
    """Promises the whole body, sends half, then drops the connection."""
    status, answer = proxy.forward(handler, body)
    reply(handler, status, answer[: len(answer) // 2], length=len(answer))
    handler.close_connection = True
    handler.connection.shutdown(2)


def _html(proxy: FaultProxy, handler, body: bytes) -> None:
    reply(handler, 200, b"<html><body>Sign in to continue</body></html>", "text/html")


def _empty(proxy: FaultProxy, handler, body: bytes) -> None:
    reply(handler, 200, b"")


def _status_error(proxy: FaultProxy, handler, body: bytes) -> None:
    reply(handler, 200, json.dumps({"status": "error", "errorType": "execution",
                                    "error": "query processing would load too many samples"}
                                   ).encode())


def _result_type(kind: str, result: list) -> Callable:
    """A successful answer of another type than the vector asked for (a scalar, a string)."""
    def fault(proxy: FaultProxy, handler, body: bytes) -> None:
        page = {"status": "success", "data": {"resultType": kind, "result": result}}
        reply(handler, 200, json.dumps(page).encode())
    return fault


def _values(make: Callable[[str], object]) -> Callable:
    def fault(proxy: FaultProxy, handler, body: bytes) -> None:
        answer = proxy.upstream_json(handler, body)
        for item in answer.get("data", {}).get("result", []):
            if "value" in item:
                item["value"][1] = make(item["value"][1])
        reply(handler, 200, json.dumps(answer).encode())
    return fault


def _labels(make: Callable[[str], str], only: bytes = b"") -> Callable:
    """Host labels rewritten by ``make`` (in the answers to queries that hold ``only``)."""
    def fault(proxy: FaultProxy, handler, body: bytes) -> None:
        if only not in body:
            _pass(proxy, handler, body)
            return
        answer = proxy.upstream_json(handler, body)
        for item in answer.get("data", {}).get("result", []):
            for name in ("Hostname", "hostname"):
                if name in item.get("metric", {}):
                    item["metric"][name] = make(item["metric"][name])
        reply(handler, 200, json.dumps(answer).encode())
    return fault


def _escapes(host: str) -> str:
    return host + "".join(TERMINAL_ESCAPES.values()) + "[@click=app.quit]x[/]"


def _many_series(proxy: FaultProxy, handler, body: bytes) -> None:
    """100,000 series, each with a full DCGM-like label set, for the temperature query."""
    if b"DCGM_FI_DEV_GPU_TEMP" not in body or b"timestamp" in body:
        _pass(proxy, handler, body)
        return
    item = ('{"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP","Hostname":"node-%d","gpu":"%d",'
            '"UUID":"GPU-%08d-aaaa-bbbb-cccc-dddddddddddd","rank":"%d","training_job":"big",'
            '"device":"nvidia%d","modelName":"NVIDIA H100 80GB HBM3","instance":"x:9400",'
            '"job":"dcgm"},"value":[1800000000,"%d"]}')
    result = ",".join(item % (n // 8, n % 8, n, n, n % 8, 40 + n % 50) for n in range(100_000))
    page = '{"status":"success","data":{"resultType":"vector","result":[' + result + "]}}"
    reply(handler, 200, page.encode())


FLOOD_SERIES = 100_000


def _flood(proxy: FaultProxy, handler, body: bytes) -> None:
    """The job's step series and, after them, 100,000 more that name ranks the job does not
    have (rank 0 to 99,999 on hosts of their own)."""
    answer = proxy.upstream_json(handler, body)
    result = answer.get("data", {}).get("result", [])
    if b"training_step_seconds" in body and any("rank" in s.get("metric", {}) for s in result):
        result += [{"metric": {"rank": str(n), "hostname": f"flood-{n // 8}",
                               "local_rank": str(n % 8)}, "value": [1800000000, "0.5"]}
                   for n in range(FLOOD_SERIES)]
    reply(handler, 200, json.dumps(answer).encode())


RANGE_BOMB_MB = 100  # what the range bomb inflates to (each answer sends ~100 KB)


@functools.cache
def _range_bomb_body() -> bytes:
    return gzip.compress(b" " * (RANGE_BOMB_MB * 1_000_000), compresslevel=9)


def _range_bomb(proxy: FaultProxy, handler, body: bytes) -> None:
    """Every range query answered with a gzip bomb (JSON whitespace); the rest passes."""
    if not handler.path.startswith("/api/v1/query_range"):
        _pass(proxy, handler, body)
        return
    reply(handler, 200, _range_bomb_body(), headers={"Content-Encoding": "gzip"})


def _flap(proxy: FaultProxy, handler, body: bytes) -> None:
    """Every other request has half the series gone."""
    answer = proxy.upstream_json(handler, body)
    if proxy.requests % 2:
        result = answer.get("data", {}).get("result", [])
        answer["data"]["result"] = result[: len(result) // 2]
    reply(handler, 200, json.dumps(answer).encode())


def _slowloris(proxy: FaultProxy, handler, body: bytes) -> None:
    """Headers at once, then the body a few bytes a second: each read is quick, the
    whole never ends."""
    status, answer = proxy.forward(handler, body)
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(answer)))
    handler.end_headers()
    for start in range(0, len(answer), 4):
        if proxy.release.wait(0.2):
            return
        try:
            handler.wfile.write(answer[start:start + 4])
            handler.wfile.flush()
        except OSError:
            return


def _header_trickle(proxy: FaultProxy, handler, body: bytes) -> None:
    """Slowloris at the header stage: the status line, then one header line every 0.2 s,
    never the blank line that ends them."""
    try:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
        count = 0
        while not proxy.release.wait(0.2):
            count += 1
            handler.wfile.write(b"X-Trickle-%d: x\r\n" % count)
            handler.wfile.flush()
    except OSError:
        pass
    handler.close_connection = True


def _echo_auth(proxy: FaultProxy, handler, body: bytes) -> None:
    """A 401 page that echoes the request's Authorization header back, as some proxies do."""
    sent = handler.headers.get("Authorization", "")
    page = f"denied: Authorization: {sent} is not welcome here".encode()
    reply(handler, 401, page, "text/plain")


def _hw_thermal(proxy: FaultProxy, handler, body: bytes) -> None:
    """Every GPU reports the hardware thermal slowdown bit: a thermal anomaly, confirmed at
    once (severe evidence), so the event log is written."""
    if b"THROTTLE_REASONS" not in body or b"timestamp" in body:
        _pass(proxy, handler, body)
        return
    answer = proxy.upstream_json(handler, body)
    for item in answer.get("data", {}).get("result", []):
        if "value" in item:
            item["value"][1] = "64"  # 0x40: HW thermal slowdown
    reply(handler, 200, json.dumps(answer).encode())


# What a hostile alert author can write: escapes, and markup that names actions.
HOSTILE_SUMMARY = ("cooling " + TERMINAL_ESCAPES["osc52"] + TERMINAL_ESCAPES["osc8"]
                   + "[@click=app.quit]Acknowledge[/] [link=https://evil.example]runbook[/link]")


def _alertmanager(proxy: FaultProxy, handler, body: bytes) -> None:
    """A fake Alertmanager v2: one hostile alert about rank 0; Prometheus passes through."""
    if not handler.path.startswith("/api/v2/alerts"):
        _pass(proxy, handler, body)
        return
    alert = {"labels": {"alertname": "GpuHot" + TERMINAL_ESCAPES["title"], "rank": "0"},
             "annotations": {"summary": HOSTILE_SUMMARY},
             "status": {"state": "active", "silencedBy": [], "inhibitedBy": []},
             "startsAt": "2026-01-01T00:00:00.000Z", "endsAt": "2099-01-01T00:00:00Z"}
    reply(handler, 200, json.dumps([alert]).encode())


FAULTS: dict[str, Callable] = {
    "pass": _pass,
    "delay-10": _delay(10), "delay-60": _delay(60), "hang": _hang,
    **{f"http-{code}": _status(code) for code in (500, 502, 503, 401, 403, 404, 429)},
    "truncated": _truncated, "reset": _reset, "html": _html, "empty": _empty,
    "status-error": _status_error,
    "scalar": _result_type("scalar", [1800000000.0, "1"]),
    "string": _result_type("string", [1800000000.0, "gpu-node-000"]),
    "nan": _values(lambda v: "NaN"), "inf": _values(lambda v: "+Inf"),
    "minus-inf": _values(lambda v: "-Inf"), "garbage": _values(lambda v: "twelve"),
    "number": _values(lambda v: 12), "huge-number": _values(lambda v: 10**400),
    "below-float32": _values(lambda v: "-1e308"), "escapes": _labels(_escapes),
    "megabyte-label": _labels(lambda v: v + "x" * 1_000_000, b"training_step_seconds"),
    "many-series": _many_series, "flood": _flood, "range-bomb": _range_bomb, "flap": _flap,
    "slowloris": _slowloris,
    "header-trickle": _header_trickle, "echo-auth": _echo_auth, "hw-thermal": _hw_thermal,
    "alertmanager": _alertmanager,
}
