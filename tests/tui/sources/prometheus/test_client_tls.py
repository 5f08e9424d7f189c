"""TLS against a real HTTPS server with a self-signed certificate made for the test: refused
by default with a message that says why and how to trust it, accepted once ``ca_bundle`` (or
``RANKTOP_CA_BUNDLE``) names the certificate, and the same one line from `ranktop report`."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.client import PromClient, QueryError

from tests.serving import serve_in_thread

EMPTY_VECTOR = json.dumps({"status": "success",
                           "data": {"resultType": "vector", "result": []}}).encode()


def self_signed(folder) -> tuple[str, str]:
    """(certificate, key) PEM files for 127.0.0.1, made by the openssl command."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command to make a self-signed certificate with")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return str(cert), str(key)


class Answer(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(EMPTY_VECTOR)))
        self.end_headers()
        self.wfile.write(EMPTY_VECTOR)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def https(tmp_path_factory):
    """(url, certificate file) of an HTTPS server answering every query with no series."""
    cert, key = self_signed(tmp_path_factory.mktemp("tls"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    serve_in_thread(server)
    yield f"https://127.0.0.1:{server.server_address[1]}", cert
    server.shutdown()
    server.server_close()


def client(url: str, environ: dict | None = None, **prometheus) -> PromClient:
    settings = load_settings(overrides={"prometheus": {"url": url, **prometheus}},
                             environ=environ or {})
    return PromClient(settings.prometheus)


def test_a_self_signed_server_is_refused_by_default_saying_why_and_how(https):
    url, _ = https
    with pytest.raises(QueryError) as caught, client(url) as refusing:
        refusing.query("up")
    assert caught.value.kind == "TLS"
    message = caught.value.message
    assert "self-signed" in message  # why
    assert "prometheus.ca_bundle" in message and "RANKTOP_CA_BUNDLE" in message  # how


def test_ca_bundle_naming_its_certificate_is_trusted(https):
    url, cert = https
    with client(url, ca_bundle=cert) as trusting:
        assert len(trusting.query("up")) == 0


def test_ranktop_ca_bundle_in_the_environment_is_trusted(https):
    url, cert = https
    with client(url, environ={"RANKTOP_CA_BUNDLE": cert}) as trusting:
        assert len(trusting.query("up")) == 0


def test_report_says_the_same_in_one_line_and_exits_1(https, tmp_path):
    url, _ = https
    done = subprocess.run([sys.executable, "-m", "ranktop", "report", "--prometheus", url,
                           "--job", "train"], capture_output=True, text=True, timeout=120,
                          env={"XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1
    said = [line for line in done.stdout.splitlines() if "TLS" in line]
    assert said and "RANKTOP_CA_BUNDLE" in said[0] and "self-signed" in said[0]
    assert "Traceback" not in done.stderr
