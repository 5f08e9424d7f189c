"""Hostile configuration: every way it once crashed or hung ranktop is now one clear error
that names the file and key, shows no secret and echoes no control character."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from ranktop.tui.settings.config import load_settings
from ranktop.tui.settings.reader import MAX_CONFIG_BYTES, ConfigError


@pytest.fixture(autouse=True)
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def error_of(tmp_path: Path, text: str, environ: dict | None = None) -> str:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ=environ or {})
    message = str(caught.value)
    assert str(path) in message and "\n" not in message and "\x1b" not in message
    return message


@pytest.mark.parametrize(("text", "says"), [
    ("[metrics.temperature]\nscale = [-inf, inf]\n", "metrics.temperature.scale: must be"),
    ("[metrics.temperature]\nscale = [0, nan]\n", "finite numbers"),
    ('[prometheus]\nurl = "http://[::1"\n', "prometheus.url: is not a valid URL"),
    ('[prometheus]\nurl = "http://host:port"\n', "prometheus.url: its port must be a number"),
    ('[alertmanager]\nurl = "http://[::1"\n', "alertmanager.url: is not a valid URL"),
    ("[display]\nmaps = 3\n", "display.maps: must list exactly four"),
    ('[display]\nmaps = "sm_active"\n', "display.maps: must list exactly four"),
    ('[prometheus]\njob = "a\\u001b]52;c;eA==\\u0007"\n', "prometheus.job: holds a control"),
    ('[metrics.temperature]\ntitle = "\\u202eevil"\n', "control character (U+202E"),
    ('[metrics.temperature]\npromql = ["up\\u009b2J"]\n', "control character (U+009B"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
])
def test_a_bad_value_is_one_line_naming_the_key(tmp_path, text, says):
    assert says in error_of(tmp_path, text)


def test_multi_line_prometheus_queries_are_still_allowed(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[metrics.temperature]\npromql = """\nmax by (gpu)\n\t(up)\n"""\n')
    assert "max by" in load_settings(path, environ={}).metrics["temperature"].queries[0].promql


@pytest.mark.parametrize("content", ["tok-secret\nsecond-line\n", "tok-\x1bsecret"])
def test_a_token_file_that_is_not_one_line_is_refused_without_showing_it(tmp_path, content):
    token = tmp_path / "token"
    token.write_text(content)
    message = error_of(tmp_path, f'[prometheus]\nbearer_token_file = "{token}"\n')
    assert "bearer_token_file" in message and "one line" in message
    assert "tok-" not in message and "secret" not in message.replace("a secret must", "")


def test_a_multi_line_token_in_the_environment_is_refused_without_showing_it(tmp_path):
    message = error_of(tmp_path, "", {"RANKTOP_BEARER_TOKEN": "tok-secret\nx"})
    assert "tok-secret" not in message and "one line" in message


def test_a_fifo_as_config_is_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    result: list = []
    reader = threading.Thread(target=lambda: result.append(_error(fifo)), daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # unblock the reader so the test ends, then fail
        with open(fifo, "w"):
            pass
        pytest.fail("reading a FIFO as the config file blocked")
    assert "not a regular file" in result[0]


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null"])
def test_a_device_as_config_is_refused(path):
    assert "not a regular file" in _error(Path(path))


def test_a_huge_config_is_refused_unread(tmp_path):
    big = tmp_path / "big.toml"
    with big.open("wb") as handle:
        handle.truncate(MAX_CONFIG_BYTES * 50)
    assert "too large" in _error(big)


def test_a_folder_as_config_is_refused(tmp_path):
    assert str(tmp_path) in _error(tmp_path)


def _error(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ={})
    return str(caught.value)
