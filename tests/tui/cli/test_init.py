"""`ranktop init` without a Prometheus, or with one that does not answer: one line, and no
file written. (With a real one: tests/integration/test_discovery.py.)"""

from __future__ import annotations

import socket

import pytest
from ranktop.tui.cli.main import main


@pytest.fixture(autouse=True)
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("RANKTOP_PROMETHEUS_URL", raising=False)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_without_a_prometheus_init_says_so_and_writes_nothing(tmp_path, capsys):
    assert main(["init"]) == 2
    err = capsys.readouterr().err
    assert err == ("ranktop init: no Prometheus given (--prometheus URL or "
                   "RANKTOP_PROMETHEUS_URL)\n")
    assert not (tmp_path / "xdg").exists()


def test_a_prometheus_that_does_not_answer_writes_nothing(tmp_path, capsys):
    target = tmp_path / "mine.toml"
    url = f"http://127.0.0.1:{closed_port()}"
    assert main(["init", "--prometheus", url, "--config", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "connection refused" in err and "Traceback" not in err
    assert not target.exists()


def test_the_help_names_init_and_what_it_never_does(capsys):
    with pytest.raises(SystemExit):
        main(["init", "--help"])
    assert "merged with it, what it held kept in FILE.bak first" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = capsys.readouterr().out
    assert "ranktop init" in listed and "(merged into one that exists, kept first as" in listed
