"""`ranktop rules` and `ranktop init` take only the flags they use; rules without a job
say on stderr that they match every job."""

from __future__ import annotations

import pytest
from ranktop.tui.cli.main import main
from ranktop.tui.cli.rules import EVERY_JOB


@pytest.fixture(autouse=True)
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("RANKTOP_JOB", raising=False)


def test_rules_without_a_job_say_so_on_stderr_in_one_line(capsys):
    assert main(["rules"]) == 0
    printed = capsys.readouterr()
    assert printed.err == EVERY_JOB + "\n"
    assert "record: ranktop:rank_gpu:info" in printed.out
    assert "training_job=" not in printed.out  # no job's selector: every job's series


@pytest.mark.parametrize("args", [["--job", "llm"], ["--jobs"]])
def test_rules_for_a_job_or_for_the_jobs_list_say_nothing_more(args, capsys):
    assert main(["rules", *args]) == 0
    printed = capsys.readouterr()
    assert printed.err == ""
    assert printed.out.startswith("groups:") or "record:" in printed.out


@pytest.mark.parametrize("command", ["rules", "init"])
@pytest.mark.parametrize("flag", [["--at", "-15m"], ["--refresh", "2"], ["--demo"]])
def test_a_flag_the_command_does_not_use_is_refused_in_one_line(command, flag, capsys):
    with pytest.raises(SystemExit) as ended:
        main([command, *flag])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unrecognized arguments" in err
    assert f"ranktop {command}" in err
