"""A scripted HTTP server for client tests: it answers every request with ``Scripted.reply``
and remembers what the last request asked."""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from tests.serving import serve_in_thread


class Scripted(BaseHTTPRequestHandler):
    """Answers every path with ``reply``; remembers what the last request asked."""

    reply: tuple[int, str, str | bytes] = (200, "application/json", "")
    headers: dict[str, str] = {}  # sent with every answer
    delay = 0.0
    seen: dict = {}
    requests = 0  # how many were asked since the server started
    queries: list[str] = []  # the PromQL of each, since the server started

    def do_GET(self) -> None:
        self._answer(b"")

    def do_POST(self) -> None:
        self._answer(self.rfile.read(int(self.headers.get("Content-Length", 0))))

    def _answer(self, body: bytes) -> None:
        url = urlparse(self.path)
        form = parse_qs(url.query) | parse_qs(body.decode())
        Scripted.requests += 1
        Scripted.queries += form.get("query", [])
        Scripted.seen = {"method": self.command, "path": url.path, "form": form,
                         "headers": dict(self.headers)}
        time.sleep(Scripted.delay)
        status, content_type, text = Scripted.reply
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in Scripted.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(text if isinstance(text, bytes) else text.encode())

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    """The scripted server's URL, for one test."""
    Scripted.requests, Scripted.queries = 0, []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    serve_in_thread(httpd)
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    Scripted.delay = 0.0
    Scripted.headers = {}
