"""`ranktop simulate` as a command: its flags' errors in one line, --help, and a clean exit
on Ctrl-C or SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from ranktop.tui.cli.simulate import simulate_main, simulate_parser

from tests.tui.simulator.test_exporter import fetch

ROOT = Path(__file__).resolve().parents[3]


def test_a_port_in_use_exits_2_with_one_line(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert simulate_main(["--port", str(port), "--nodes", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "address already in use" in err and str(port) in err


@pytest.mark.parametrize("argv,words", [
    (["--port", "99999"], "0-65535"),
    (["--nodes", "0"], "--nodes"),
    (["--hostname-label", "HOST"], "invalid choice"),
    (["--bogus"], "unrecognized arguments"),
    (["--start", "-5"], "--start"),
    (["--demo-start", "-5"], "--demo-start"),
    (["--scenario", "/nonexistent/scenario.toml"], "no such file"),
    (["--profile", "dcp"], "invalid choice"),
    (["--profile", "k8s", "--kubernetes"], "use one"),
    (["--job-metrics", "theirs"], "invalid choice"),
])
def test_bad_flags_exit_2_with_one_line(capsys, argv, words):
    assert simulate_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and err.startswith("ranktop simulate: ")


def test_help_exits_0(capsys):
    assert simulate_main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "ranktop simulate" in out and "--kubernetes" in out and "--no-sm-active" in out
    assert "--profile {default,stock,k8s}" in out
    assert "--job-metrics {ranktop,foreign}" in out


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_serves_until_ctrl_c_then_exits_0_quietly(stop):
    code = "import sys; from ranktop.tui.cli.simulate import simulate_main, simulate_parser; " \
           "sys.exit(simulate_main(['--port', '0', '--nodes', '2']))"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = proc.stdout.readline()
        match = re.fullmatch(r"serving 16 ranks on (http://127\.0\.0\.1:\d+/metrics)\n", line)
        assert match, line
        assert fetch(match[1])[0] == 200
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and "Traceback" not in err


def test_the_scenario_start_is_named_as_the_consoles_demo_start_and_the_old_name_stays():
    assert simulate_parser().parse_args(["--demo-start", "172"]).start == 172
    assert simulate_parser().parse_args(["--start", "30"]).start == 30
