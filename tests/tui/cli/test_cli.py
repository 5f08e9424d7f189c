"""The command line: help, version, and bad input as a clear message with exit status 2."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

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
    (["--demo", "--nodes", "0"], "argument --nodes: must be a whole number, at least 1"),
    (["--demo", "--gpus-per-node", "many"], "must be a whole number, at least 1 (got 'many')"),
    (["--demo", "--refresh", "0.01"], "from 0.2 to 3600"),
    (["--demo", "--refresh", "nan"], "from 0.2 to 3600"),
    (["--demo", "--color-system", "rainbow"], "invalid choice"),
    (["--demo", "--demo-start", "-5"], "--demo-start: must be a number of seconds, at least 0"),
    (["--demo", "--demo-start", "inf"], "--demo-start: must be a number of seconds"),
    (["--demo", "--seed", "x"], "--seed: invalid int value"),
    (["--demo", "--bogus"], "unrecognized arguments: --bogus"),
    (["report", "--demo", "--duration", "-1"], "--duration: must be a number of seconds"),
    (["report", "--demo", "--duration", "nan"], "--duration: must be a number of seconds"),
    (["report", "--demo", "--duration", "inf"], "--duration: must be a number of seconds"),
    # flags a subcommand would ignore are refused
    (["report", "--demo", "--color-system", "256"], "unrecognized arguments: --color-system"),
    (["report", "--demo", "--no-mouse"], "unrecognized arguments: --no-mouse"),
    (["check-config", "--demo"], "unrecognized arguments: --demo"),
    (["check-config", "--local"], "unrecognized arguments: --local"),
    (["check-config", "--nodes", "4"], "unrecognized arguments: --nodes 4"),
    (["--demo", "--prometheus", "http://p:9090"], "--demo is a simulated cluster of its own:"
                                                  " it cannot be combined with --prometheus"),
    (["report", "--demo", "--local"], "cannot be combined with --local"),
])
def test_bad_flags_exit_2_with_one_line_that_says_why(capsys, argv, words):
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert words in err
    assert err.count("\n") == 1 and "--help" in err  # one line, pointing at the help


@pytest.mark.parametrize("command", [[], ["report"], ["check-config"]])
@pytest.mark.parametrize("url,words", [
    ("http://[::1", "is not a valid URL (Invalid IPv6 URL) (got 'http://[::1')"),
    ("http://", "must be an http:// or https:// URL with a host (got 'http://')"),
    ("http://prometheus:99999", "its port must be a number from 1 to 65535"),
    ("http://prometheus:x", "its port must be a number from 1 to 65535"),
    ("ftp://prometheus", "must be an http:// or https:// URL with a host"),
    ("http://prom etheus", "must not contain spaces"),
])
def test_a_malformed_url_is_one_line_and_exit_2_for_every_command(capsys, command, url, words):
    assert main([*command, "--prometheus", url]) == 2
    err = capsys.readouterr().err
    assert f"--prometheus: prometheus.url: {words}" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_malformed_alertmanager_url_is_refused_too(capsys):
    assert main(["--demo", "--alertmanager", "http://[::1"]) == 2
    assert "--alertmanager: alertmanager.url: is not a valid URL" in capsys.readouterr().err


def test_help_lists_every_subcommand_and_each_subcommand_its_own_flags(capsys):
    from ranktop.tui.cli.flags import SUBCOMMANDS

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert set(SUBCOMMANDS) == {"report", "check-config", "init", "rules", "jobs", "open",
                                "simulate"}
    for name in SUBCOMMANDS:
        assert f"ranktop {name} " in out
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    out = capsys.readouterr().out
    assert "--duration" in out and "--local" in out and "--log-dir" in out
    assert "--color-system" not in out and "--alertmanager" not in out


def test_a_log_dir_that_cannot_be_a_folder_is_one_line_and_exit_2(tmp_path, capsys):
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for command in ([], ["report"]):
        assert main([*command, "--demo", "--log-dir", str(a_file / "logs")]) == 2
        err = capsys.readouterr().err
        assert f"--log-dir: cannot write the demo's logs in {a_file / 'logs'}" in err
        assert err.count("\n") == 1


def test_report_honours_local(monkeypatch, capsys):
    from ranktop.tui.sources import nvml

    from tests.tui.fake_pynvml import FakeGpu, FakeNvml

    monkeypatch.setattr(nvml, "_bindings", lambda: FakeNvml(
        [FakeGpu(uuid=f"GPU-{i}") for i in range(2)]))
    main(["report", "--local"])
    out = capsys.readouterr().out
    assert "ranks: 2/2 up" in out


def test_report_honours_log_dir(tmp_path, capsys):
    assert main(["report", "--demo", "--nodes", "2", "--log-dir", str(tmp_path / "logs")]) in (
        0, 1)
    assert list((tmp_path / "logs").rglob("*.log")), "no rank wrote its log there"


def test_a_bad_config_file_exits_2_naming_file_and_key(tmp_path, capsys):
    config = tmp_path / "bad.toml"
    config.write_text("[display]\nrefresh_seconds = 0\n")
    assert main(["--demo", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert str(config) in err and "display.refresh_seconds" in err
    assert "Traceback" not in err


def test_the_installed_command_reports_errors_without_a_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "ranktop", "--demo", "--config", str(tmp_path / "missing.toml")],
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


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT],
                         ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_report_ended_by_a_signal_removes_its_folder_without_a_traceback(tmp_path, signum):
    folders = tmp_path / "tmp"
    folders.mkdir()
    report = subprocess.Popen(
        [sys.executable, "-m", "ranktop.tui", "report", "--demo", "--nodes", "2",
         "--duration", "600"],
        env={**os.environ, "TMPDIR": str(folders)}, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):  # the report has made its folder: it is polling
            if list(folders.glob("ranktop-report-*")) or report.poll() is not None:
                break
            time.sleep(0.05)
        report.send_signal(signum)
        _, err = report.communicate(timeout=60)
    finally:
        report.kill()
    assert report.returncode == 128 + signum
    assert "Traceback" not in err
    assert list(folders.iterdir()) == []


def test_the_console_waits_less_on_esc_unless_the_user_says_how_long():
    from ranktop.tui.cli.main import ESC_DELAY_MS, terminal_environment

    environ: dict[str, str] = {}
    terminal_environment("256", environ)
    assert environ == {"TEXTUAL_COLOR_SYSTEM": "256", "ESCDELAY": str(ESC_DELAY_MS)}
    assert ESC_DELAY_MS < 100  # Textual's own wait, which every Esc press sat out
    environ = {"ESCDELAY": "200"}
    terminal_environment("auto", environ)
    assert environ == {"ESCDELAY": "200"}


def test_a_bad_parallelism_is_the_same_line_and_exit_2_in_every_command(tmp_path, capsys):
    config = tmp_path / "layout.toml"
    config.write_text('[layout]\nparallelism = "tp=8,pq=4"\n')
    said = set()
    for command in ([], ["report"], ["check-config"]):
        assert main([*command, "--demo", "--config", str(config)] if command != ["check-config"]
                    else [*command, "--config", str(config)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "layout.parallelism: 'pq=4' is not axis=size" in err
        said.add(err)
    assert len(said) == 1


def test_report_says_the_layout_and_why_a_parallelism_is_not_the_jobs(tmp_path, capsys):
    config = tmp_path / "layout.toml"
    for text, says in [('"tp=8,pp=4"', "layout: tp=8,pp=4,dp=4 (128 ranks"),
                       ('"tp=8,pp=4,dp=8"', "layout: [layout] parallelism tp=8,pp=4,dp=8 is "
                                            "256 ranks but the job has 128: laid out by node")]:
        config.write_text(f"[layout]\nparallelism = {text}\n")
        main(["report", "--demo", "--nodes", "16", "--config", str(config)])
        assert says in capsys.readouterr().out


def test_a_terminal_that_cannot_draw_the_console_is_pointed_at_report(capsys, monkeypatch):
    monkeypatch.setenv("TERM", "dumb")
    assert main(["--demo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ranktop: this terminal (TERM=dumb) cannot draw the console")
    assert "`ranktop report`" in err and err.count("\n") == 1
    assert main(["report", "--demo"]) in (0, 1)  # the text report needs no screen


@pytest.mark.parametrize("at", ["-99999999999999999999d", "9" * 400, "0001-01-01T00:00:00Z",
                                "0001-01-01T00:00:00"], ids=["days", "digits", "year-1-utc",
                                                             "year-1-local"])
@pytest.mark.parametrize("command", [[], ["report"]], ids=["console", "report"])
def test_a_time_no_backend_holds_is_one_line_and_exits_2(monkeypatch, capsys, at, command):
    from ranktop.tui.cli import main as cli

    monkeypatch.setattr(cli, "run_demo", lambda settings, **options: 0)
    with pytest.raises(SystemExit) as exited:
        cli.main([*command, "--demo", f"--at={at}"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1 and len(err) < 200
    assert "argument --at:" in err
    assert "outside the times a backend holds" in err or "is not a time such as" in err


@pytest.mark.parametrize("runner,argv", [
    ("run_demo", ["--demo", "--demo-start", "300", "--at=-2m"]),
    ("run_live", ["--prometheus", "http://p:9090", "--job", "llama", "--at=-2m"]),
])
def test_the_console_opens_at_the_moment_at_names(monkeypatch, runner, argv):
    from ranktop.tui.cli import main as cli

    told = {}
    monkeypatch.setattr(cli, runner, lambda settings, **options: told.update(options) or 0)
    before = time.time()
    assert cli.main(argv) == 0
    assert before - 120 <= told["at"] <= time.time() - 120  # read when the flags were
