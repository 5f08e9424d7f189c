"""`ranktop check-config` refuses ``[keys]`` and ``[logs]`` exactly as the console does: the
same one line, exit status 2, before any connection is tried."""

from __future__ import annotations

import pytest
from ranktop.tui.cli.main import main


@pytest.fixture(autouse=True)
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def refusal(capsys, argv: list[str]) -> str:
    """The one line a refused configuration prints (exit status 2 checked)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("config,words", [
    ('[keys]\n"app.pause" = "z"\n', ["'app.pause'", "'map.zoom'", "'z'", "cluster screen"]),
    ('[keys]\n"rank.next" = "f"\n', ["'rank.next'", "'log.follow'", "rank screen"]),
    ('[keys]\n"app.nonsense" = "x"\n', ["unknown binding id 'app.nonsense'", "app.pause"]),
    ('[logs]\nspec = "torchrunn:/logs"\n', ["logs.spec: unknown log preset 'torchrunn'"]),
    ('[logs]\nspec = "/logs/{hostname}.log"\n', ["logs.spec: unknown placeholder {hostname}"]),
    ('[logs]\nspec = "slurm:/out/%q.out"\n', ["logs.spec: slurm pattern", "unknown field %q"]),
])
def test_the_console_and_check_config_refuse_a_config_with_the_same_line(
        tmp_path, capsys, config, words):
    path = tmp_path / "config.toml"
    path.write_text(config)
    console = refusal(capsys, ["--demo", "--config", str(path)])
    checked = refusal(capsys, ["check-config", "--config", str(path)])
    assert console == checked
    assert console.startswith(f"ranktop: configuration error: {path}: ")
    for word in words:
        assert word in console


def test_a_bad_logs_flag_is_named_as_the_flag(capsys):
    line = refusal(capsys, ["check-config", "--logs", "nope:/x"])
    assert "--logs: logs.spec: unknown log preset 'nope'" in line


def test_check_config_shows_the_users_keys_and_log_spec(tmp_path, capsys):
    path = tmp_path / "config.toml"
    path.write_text('[keys]\n"rank.back" = "backspace"\n"app.pause" = "space"\n'
                    '[logs]\nspec = "torchrun:/shared/logs"\n')
    assert main(["check-config", "--config", str(path)]) == 1  # no Prometheus to check
    out = capsys.readouterr().out
    assert "keys           rank.back = backspace, app.pause = space" in out
    assert "logs           torchrun:/shared/logs" in out


def test_check_config_shows_the_alertmanager_it_accepts(capsys):
    assert main(["check-config", "--alertmanager", "http://am:9093"]) == 1
    assert "alertmanager   http://am:9093" in capsys.readouterr().out


def test_a_query_that_finds_no_series_is_said_empty_never_ok():
    from ranktop.tui.cli.check_config import query_line

    found = query_line("temperature", 512, 0.012, "DCGM_FI_DEV_GPU_TEMP")
    empty = query_line("xid", 0, 0.004, "DCGM_FI_DEV_XID_ERRORS")
    assert found.split()[:4] == ["temperature", "ok", "512", "series"]
    assert " ok " not in empty
    assert empty.split()[:3] == ["xid", "EMPTY", "no"]
    assert "not exported, or the selector matches nothing" in empty
