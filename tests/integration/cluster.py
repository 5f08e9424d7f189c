"""A real Prometheus, or a real VictoriaMetrics, scraping `ranktop simulate`, started and
stopped by the tests: the same assertions hold against either backend."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from ranktop.tui.core.detect.lookback import SEEN_STEP
from ranktop.tui.core.model import Frame
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.exporter import ExportOptions, make_server
from ranktop.tui.simulator.scenario import load_scenario
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.serving import serve_in_thread

HERE = Path(__file__).resolve().parent
RULES = HERE.parent.parent / "config" / "prometheus" / "ranktop-alerts.yml"


def require(binary: str) -> str:
    """The binary's path; without it, skip (or, in CI, fail: CI must run these)."""
    path = shutil.which(binary)
    if path is None:
        message = (f"{binary} is not installed (.ci/run installs Debian's prometheus and "
                   "victoria-metrics packages)")
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# How long a test waits for a backend, a scrape or a simulator before it gives up: a wait
# ends as soon as what it waits for is there, so only a loaded machine (a load of 10 and
# more on 2 cores, where a start takes tens of seconds) comes near it.
PATIENCE_SECONDS = 180.0


def wait_for(check, what: str, timeout: float = PATIENCE_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"gave up waiting for {what} after {timeout:g} s")


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.load(answer)


def instant(prometheus_url: str, promql: str) -> list:
    """The query's result now; VictoriaMetrics is asked not to hide its newest samples."""
    query = urllib.parse.urlencode({"query": promql, "nocache": "1"})
    return get_json(f"{prometheus_url}/api/v1/query?{query}")["data"]["result"]


def scrape_config(jobs: Mapping[str, list[int]], interval: str, rules: bool) -> str:
    """A Prometheus config scraping each job's ports on localhost every ``interval``."""
    if rules:
        lines = [f"global: {{scrape_interval: {interval}, evaluation_interval: {interval}}}",
                 f"rule_files: ['{RULES}']"]
    else:  # VictoriaMetrics refuses the keys that belong to rules (vmalert's)
        lines = [f"global: {{scrape_interval: {interval}}}"]
    lines.append("scrape_configs:")
    for name, ports in jobs.items():
        lines.append(f"  - job_name: {name}")
        lines.append(f"    static_configs: [{{targets: {[f'127.0.0.1:{p}' for p in ports]}}}]")
    return "\n".join(lines) + "\n"


class Simulator:
    """`ranktop simulate` on a free port, 30 s into its scenario (the GPU is hot by then)."""

    def __init__(self, scenario: Path, seed: int, nodes: int = 64,
                 extra: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ranktop", "simulate", "--port", str(self.port),
             "--seed", str(seed), "--scenario", str(scenario), "--start", "30",
             "--nodes", str(nodes), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        wait_for(lambda: urllib.request.urlopen(self.url, timeout=2).status == 200,
                 f"ranktop simulate on port {self.port}")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


class SkippingClock:
    """Monotonic seconds that a test can move ahead: it skips a quiet stretch at once."""

    def __init__(self) -> None:
        self.skipped = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.skipped


class SkippingSimulator:
    """The simulated job served from a thread of the test's process, 30 s into its scenario
    (like ``Simulator``), on a clock the test can skip ahead: the scenario runs in real time
    where the test watches it, and its quiet stretches pass at once."""

    def __init__(self, scenario: Path, seed: int, nodes: int,
                 options: ExportOptions | None = None, start: float = 30.0) -> None:
        self.clock = SkippingClock()
        cluster = SimCluster(nodes, seed=seed, scenario=load_scenario(scenario))
        self.server = make_server(cluster, options, port=0, clock=self.clock, start=start)
        self.port = self.server.server_address[1]
        serve_in_thread(self.server)

    def now(self) -> float:
        """The scenario's time."""
        return self.clock() - self.server.started

    def skip_to(self, moment: float) -> None:
        """Scenario time ``moment`` at once, where it is still ahead."""
        self.clock.skipped += max(0.0, moment - self.now())

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Prometheus:
    """A Prometheus scraping ``targets`` (or each of ``jobs``) every second, with ranktop's
    alerting rules."""

    name = "Prometheus"

    def __init__(self, folder: Path, targets: list[int], port: int | None = None,
                 interval: str = "1s", jobs: Mapping[str, list[int]] | None = None) -> None:
        self.binary = require("prometheus")
        self.folder = folder
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = folder / "prometheus.yml"
        config.write_text(scrape_config(jobs or {"ranktop-simulate": targets}, interval, True))
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, f"--config.file={self.folder / 'prometheus.yml'}",
             f"--storage.tsdb.path={self.folder / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: urllib.request.urlopen(f"{self.url}/-/ready", timeout=2).status == 200,
                 f"Prometheus on port {self.port}")

    def wait_for_series(self, promql: str, count: int,
                        timeout: float = PATIENCE_SECONDS) -> None:
        def enough() -> bool:
            result = instant(self.url, promql)
            return bool(result) and float(result[0]["value"][1]) >= count

        wait_for(enough, f"{promql} >= {count}", timeout)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=20)
            self.process = None


class VictoriaMetrics(Prometheus):
    """A single-node VictoriaMetrics scraping like ``Prometheus`` (no alerting rules: those
    are vmalert's), hiding its newest ``latency_offset`` (its default: 30 s)."""

    name = "VictoriaMetrics"

    def __init__(self, folder: Path, targets: list[int], port: int | None = None,
                 interval: str = "1s", jobs: Mapping[str, list[int]] | None = None,
                 latency_offset: str = "") -> None:
        self.binary = require("victoria-metrics")
        self.folder = folder
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.flags = [f"-search.latencyOffset={latency_offset}"] if latency_offset else []
        config = folder / "scrape.yml"
        config.write_text(scrape_config(jobs or {"ranktop-simulate": targets}, interval, False))
        self.process = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, f"-promscrape.config={self.folder / 'scrape.yml'}",
             f"-storageDataPath={self.folder / 'data'}",
             f"-httpListenAddr=127.0.0.1:{self.port}", "-loggerLevel=ERROR", *self.flags],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: urllib.request.urlopen(f"{self.url}/health", timeout=2).status == 200,
                 f"VictoriaMetrics on port {self.port}")

    def wait_for_series(self, promql: str, count: int,
                        timeout: float = PATIENCE_SECONDS) -> None:
        """As Prometheus's, making what was scraped searchable at once (VictoriaMetrics
        otherwise takes ~10 s to show a new series)."""
        def enough() -> bool:
            urllib.request.urlopen(f"{self.url}/internal/force_flush", timeout=2).close()
            result = instant(self.url, promql)
            return bool(result) and float(result[0]["value"][1]) >= count

        wait_for(enough, f"{promql} >= {count}", timeout)


BACKENDS = {"prometheus": Prometheus, "victoria-metrics": VictoriaMetrics}


@contextmanager
def served(folder: Path, scenario: Path, job: str, ranks: int, seed: int,
           nodes: int) -> Iterator[Prometheus]:
    """A Prometheus scraping one simulated job, once all its ranks are in; both stopped at
    the end."""
    simulator = Simulator(scenario, seed=seed, nodes=nodes)
    server = Prometheus(folder, [simulator.port])
    try:
        server.wait_for_series(f'count(training_step_seconds{{training_job="{job}"}})', ranks)
        yield server
    finally:
        server.stop()
        simulator.stop()


@contextmanager
def scraped_file(scrape: Path) -> Iterator[int]:
    """An exporter serving ``scrape`` (a fixture in the exposition format) as the file
    holds it at each scrape, on a free port (yielded), from a thread of the test's process."""

    class Exporter(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = scrape.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Exporter)
    serve_in_thread(server)
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def held_then_one_gone(server: Prometheus, simulator: SkippingSimulator, job: str,
                       ranks: int, to: float) -> None:
    """Prometheus holds the live job with all its ``ranks`` (a report learns which ranks
    reported before it, a ``SEEN_STEP`` apart); then ``simulator`` skips to ``to``, where
    one rank is dead, and its series are gone."""
    series = f'count(training_step_seconds{{training_job="{job}"}})'
    server.wait_for_series(series, ranks)
    held_past = (time.time() // SEEN_STEP + 1) * SEEN_STEP + 1.0
    wait_for(lambda: time.time() >= held_past, "Prometheus holding the live job")
    simulator.skip_to(to)
    wait_for(lambda: [float(r["value"][1]) for r in instant(server.url, series)]
             == [ranks - 1], "the dead rank's series gone")


@contextmanager
def file_polled_once(folder: Path, scrape: Path, job: str, ready: str, count: int
                     ) -> Iterator[Frame]:
    """One poll of ``job`` by ranktop's Prometheus source, against a Prometheus scraping
    ``scrape`` (a fixture in the exposition format) once ``ready`` counts ``count``."""
    with scraped_file(scrape) as port:
        server = Prometheus(folder, [port])
        try:
            server.wait_for_series(ready, count)
            settings = load_settings(overrides={"prometheus": {"url": server.url, "job": job}},
                                     environ={})
            yield PrometheusSource(settings).poll_now()
        finally:
            server.stop()
