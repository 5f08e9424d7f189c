"""`ranktop check-config --toml` prints the whole configuration as one file, and that file
read back (``--config``) gives the very settings it was printed from."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest
from ranktop.tui.cli.main import main
from ranktop.tui.cli.whole_config import USE
from ranktop.tui.settings.config import load_settings
from ranktop.tui.settings.reader import read_toml

USER_FILE = '''
[display]
refresh_seconds = 5
maps = ["power", "temperature", "nvlink", "my_metric"]

[keys]
"app.help" = "f1"

[metrics.my_metric]
title = "Loader wait \\"ms\\""
bad = "high"
promql = ["sum by (rank) (loader_wait{job=\\"x\\"})\\n  * 1000", "vector(1)"]
shows = ["wait", "one"]
scale = [0, 10.5]

[logs]
spec = "/logs/{host}/rank{rank}.log"
'''


@pytest.fixture(autouse=True)
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for name in [n for n in os.environ if n.startswith("RANKTOP_")]:
        monkeypatch.delenv(name)


def printed(capsys, argv: list[str]) -> str:
    assert main(["check-config", "--toml", *argv]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# ranktop's whole configuration")
    return out


def test_the_printed_file_loads_as_the_same_settings(tmp_path, capsys, monkeypatch):
    mine = tmp_path / "mine.toml"
    mine.write_text(USER_FILE)
    monkeypatch.setenv("RANKTOP_TENANT", "team-a")
    argv = ["--config", str(mine), "--job", "llama", "--prometheus", "http://prom:9090/",
            "--flight-recorder", "/dumps/rank{rank}", "--refresh", "3"]
    text = printed(capsys, argv)
    whole = tmp_path / "whole.toml"
    whole.write_text(text)
    wanted = load_settings(mine, {"prometheus": {"job": "llama", "url": "http://prom:9090/"},
                                  "logs": {"flight_recorder": "/dumps/rank{rank}"},
                                  "display": {"refresh_seconds": 3.0}})
    assert wanted.prometheus.tenant == "team-a" and wanted.refresh_seconds == 3.0
    assert replace(load_settings(whole), config_file=None) == replace(wanted, config_file=None)
    # and with no variable set, the file alone holds them
    monkeypatch.delenv("RANKTOP_TENANT")
    assert load_settings(whole).prometheus.tenant == "team-a"
    assert "RANKTOP_TENANT (environment)" in text and str(mine) in text


def test_every_key_is_in_it_and_printing_it_again_changes_nothing(tmp_path, capsys):
    whole = tmp_path / "whole.toml"
    whole.write_text(printed(capsys, []))
    table = read_toml(whole)
    assert table["display"]["maps"] and table["metrics"]["step_time"]["promql"]
    again = printed(capsys, ["--config", str(whole)])
    body = again.split("\n\n", 1)[1]
    assert body == whole.read_text().split("\n\n", 1)[1]


def test_a_password_in_the_url_is_never_printed(tmp_path, capsys):
    text = printed(capsys, ["--prometheus", "https://me:s3cret@prom.example:9090"])
    assert "s3cret" not in text and "me:" not in text
    assert 'url = "https://prom.example:9090"' in text
    assert "not written here" in text


def test_check_config_points_to_it_in_its_closing_lines(capsys):
    assert main(["check-config"]) == 1
    assert capsys.readouterr().out.rstrip().splitlines()[-1] == USE
