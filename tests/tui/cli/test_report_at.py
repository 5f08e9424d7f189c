"""`ranktop report --at TIME`: the report of a past moment, replayed from the source's
history, said to be of that moment and not live; what cannot be shown is one line."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from ranktop.tui.cli.main import main
from ranktop.tui.cli.report import as_json, as_text, collect, collect_at, exit_code
from ranktop.tui.engine.replay import NothingThen
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock

NODES = ["--nodes", "4"]  # 32 ranks: a replay of minutes stays quick


def demo_engine(now: float):
    """The demo's engine, its scenario begun at START, its clock at ``now``."""
    settings = load_settings(environ={})
    source = demo_source(DemoSettings(64, 8, 7), FakeClock(now), started=START)
    return settings, ThreadEngine(settings, source)


def test_a_past_moment_finds_what_a_report_made_then_found():
    settings, engine = demo_engine(START + 400)
    past = collect_at(settings, engine, START + 140)
    assert past.at == START + 140 and past.frame.time == START + 140
    settings, live_engine = demo_engine(START + 100)
    clock = FakeClock(START + 100)

    def sleep(seconds: float) -> None:
        clock.now += seconds
        live_engine.source.clock.now += seconds

    live = collect(settings, live_engine, 40.0, clock=clock, sleep=sleep)
    assert live.frame.time == START + 140
    confirmed = {(a.kind, a.rank) for a in live.analysis.confirmed}
    assert confirmed and confirmed <= {(a.kind, a.rank) for a in past.analysis.confirmed}
    assert exit_code(past) == exit_code(live) == 1


def test_the_text_and_json_say_the_moment_and_that_it_is_not_live():
    settings, engine = demo_engine(START + 400)
    findings = collect_at(settings, engine, START + 141.5)  # down to the 2 s refresh grid
    text = as_text(findings, settings)
    moment = datetime.fromtimestamp(START + 140).astimezone().isoformat()
    assert text.splitlines()[0] == (f"ranktop report: {engine.job_name}  at {moment}, "
                                    "from the backend's history: not live")
    document = json.loads(as_json(findings, settings))
    assert document["live"] is False and document["at"] == moment
    assert datetime.fromisoformat(document["at"]).timestamp() == START + 140


def test_a_source_that_keeps_no_history_says_so():
    settings, engine = demo_engine(START + 400)
    engine.source.keeps_past = False  # as NVML alone
    with pytest.raises(NothingThen, match="keeps no history"):
        collect_at(settings, engine, START + 140)


@pytest.mark.parametrize("at", [["--at=-60s"], ["--at", "-60s"], ["--at", "-1m"]])
def test_the_command_reports_a_past_moment_of_the_demo(at, capsys):
    code = main(["report", "--demo", *NODES, "--demo-start", "400", *at, "--json"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert code == exit_code_of(document) and captured.err == ""
    assert document["live"] is False and document["anomalies"]


def exit_code_of(document: dict) -> int:
    return 0 if document["healthy"] else 1


@pytest.mark.parametrize("argv, said", [
    (["--demo", *NODES, "--at=-60s"], "nothing at "),  # the demo began now
    (["--demo", *NODES, "--at=-60s", "--duration", "10"], "takes no --duration"),
    (["--prometheus", "http://127.0.0.1:1", "--at=-60s"], "connection refused"),
])
@pytest.mark.parametrize("engine", ["thread", "process"])
def test_what_cannot_be_reported_is_one_line_and_exits_2(argv, said, engine, capsys,
                                                         monkeypatch):
    monkeypatch.setenv("RANKTOP_ENGINE", engine)
    assert main(["report", *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
