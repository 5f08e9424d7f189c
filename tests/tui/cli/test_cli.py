"""The command line: help, version, and bad input as a clear message with exit status 2."""

from __future__ import annotations

import subprocess
import sys

import pytest
from ranktop.tui.cli.main import main


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as version:
        main(["--version"])
    assert version.value.code == 0
    assert capsys.readouterr().out.startswith("ranktop ")
    with pytest.raises(SystemExit) as shown:
        main(["--help"])
    assert shown.value.code == 0
    out = capsys.readouterr().out
    assert "--demo" in out and "--color-system" in out and "--no-mouse" in out


def test_no_source_is_a_usage_error_that_points_at_the_demo(capsys):
    assert main([]) == 2
    assert "ranktop --demo" in capsys.readouterr().err


@pytest.mark.parametrize("argv,words", [
    (["--demo", "--nodes", "0"], "--nodes: must be at least 1"),
    (["--demo", "--gpus-per-node", "many"], "is not a whole number"),
    (["--demo", "--refresh", "0.01"], "between 0.2 and 3600"),
    (["--demo", "--color-system", "rainbow"], "invalid choice"),
])
def test_bad_flags_exit_2_with_the_reason(capsys, argv, words):
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    assert words in capsys.readouterr().err


def test_a_bad_config_file_exits_2_naming_file_and_key(tmp_path, capsys):
    config = tmp_path / "bad.toml"
    config.write_text("[display]\nrefresh_seconds = 0\n")
    assert main(["--demo", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert str(config) in err and "display.refresh_seconds" in err
    assert "Traceback" not in err


def test_the_installed_command_reports_errors_without_a_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "tui", "--demo", "--config", str(tmp_path / "missing.toml")],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2
    assert "no such file" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_cli_and_the_demo_source_import_no_textual():
    code = (
        "import sys\n"
        "import ranktop.tui.cli.main, ranktop.tui.settings.config\n"
        "import ranktop.tui.simulator.cluster, ranktop.tui.sources.demo\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_an_unknown_binding_id_in_the_keymap_is_named(tmp_path, capsys):
    config = tmp_path / "keys.toml"
    config.write_text('[keys]\n"app.nonsense" = "x"\n')
    assert main(["--demo", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "app.nonsense" in err and "app.pause" in err


def test_a_bad_prometheus_url_names_the_flag(capsys):
    assert main(["--prometheus", "localhost:9090"]) == 2
    assert "--prometheus: prometheus.url: must be an http:// or https:// URL" in (
        capsys.readouterr().err)


def test_check_config_reports_an_unreachable_server_and_exits_1(capsys):
    code = main(["check-config", "--prometheus", "http://127.0.0.1:9", "--job", "j"])
    out = capsys.readouterr().out
    assert code == 1
    assert "prometheus     http://127.0.0.1:9" in out
    assert "FAILED: connection refused" in out


def test_check_config_never_prints_secrets(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RANKTOP_BEARER_TOKEN", "tok-123-secret")
    monkeypatch.setenv("RANKTOP_PASSWORD", "pw-456-secret")
    monkeypatch.setenv("RANKTOP_USERNAME", "me")
    main(["check-config", "--prometheus", "http://127.0.0.1:9"])
    out = capsys.readouterr().out
    assert "bearer token ***" in out and "password ***" in out
    assert "tok-123-secret" not in out and "pw-456-secret" not in out


def test_a_broken_rank_map_file_is_a_configuration_error(tmp_path, capsys):
    rank_map = tmp_path / "ranks.csv"
    rank_map.write_text("0,host-a\n")
    code = main(["--prometheus", "http://127.0.0.1:9", "--rank-map", str(rank_map)])
    assert code == 2
    assert f"{rank_map}: line 1: expected 'rank,host,gpu'" in capsys.readouterr().err
