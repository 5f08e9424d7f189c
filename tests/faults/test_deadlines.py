"""Every request has a total deadline: a server that trickles its header lines (slowloris
at the header stage: each line arrives well within any read timeout, the headers never end)
fails the request at ``prometheus.timeout_seconds``, and ``ranktop report`` exits 1 saying
so instead of hanging."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading

from ranktop.tui.core.model import Health
from ranktop.tui.sources.prometheus.client import QueryError
from ranktop.tui.sources.prometheus.source import PrometheusSource

from tests.faults.conftest import JOB, settings_for

TIMEOUT = 1.0
# How long `report --duration 1` may take before the test calls it hung: its polls, each
# bounded by TIMEOUT, and Python's start on a loaded machine. Without the deadline it never
# ends (the headers never do).
HUNG_AFTER = 60


def poll_in_thread(source: PrometheusSource) -> bool:
    """Whether one poll ended (in a thread, so that a hang fails the test, not the run)."""
    def poll() -> None:
        with contextlib.suppress(QueryError):
            source.poll_now()
    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    thread.join(HUNG_AFTER)
    return not thread.is_alive()


def test_trickled_headers_time_out_at_the_deadline(proxy):
    source = PrometheusSource(settings_for(proxy.url, timeout=TIMEOUT))
    proxy.set("header-trickle")
    try:
        assert poll_in_thread(source), "the poll hung on trickled headers"
        status = source.status()
        assert status.health in (Health.ERROR, Health.STALE)
        assert "timed out" in status.message
        proxy.set("pass")  # the next poll opens new connections and reads again
        assert source.poll_now() is not None and source.status().health is Health.OK
    finally:
        proxy.set("pass")
        source.client.close()


def test_report_against_trickled_headers_exits_1_within_its_deadline(proxy, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f"[prometheus]\ntimeout_seconds = {TIMEOUT}\n")
    proxy.set("header-trickle")
    done = subprocess.run(
        [sys.executable, "-m", "ranktop", "report", "--config", str(config), "--prometheus",
         proxy.url, "--job", JOB, "--duration", "1", "--refresh", "0.5", "--json"],
        capture_output=True, text=True, timeout=HUNG_AFTER,
        env={"XDG_CONFIG_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path),
             "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stderr
    assert "timed out" in done.stdout and "Traceback" not in done.stderr
