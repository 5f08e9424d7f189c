"""`ranktop report --json` carries the Flight Recorder's verdict when the hang has one; the
flag and the config key that say where the dumps are."""

from __future__ import annotations

import json

from ranktop.tui.cli.main import main
from ranktop.tui.cli.report import as_json, collect
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.flight_writer import FlightWriter
from ranktop.tui.simulator.log_writer import LogWriter
from ranktop.tui.simulator.scenario import Fault, Scenario
from ranktop.tui.sources.demo import FLIGHT_FOLDER, DemoSource, demo_source

from tests.tui.conftest import START, FakeClock


def test_a_report_during_the_demo_hang_carries_the_dumps_verdict(tmp_path) -> None:
    settings = load_settings(environ={})
    clock = FakeClock(START + 196.0)  # rank 455 died at 172; the dumps land 30 s later
    source = demo_source(DemoSettings(64, 8, 7), clock, started=START,
                         log_root=tmp_path / "logs")

    def sleep(seconds: float) -> None:
        clock.now += seconds

    findings = collect(settings, ThreadEngine(settings, source), 24.0, clock=clock, sleep=sleep)
    hang = json.loads(as_json(findings, settings))["hang"]
    assert hang["culprits"] == [455] and hang["sure"] and hang["disagreement"] is None
    flight = hang["flight_recorder"]
    assert flight["verdict"] == "no_dump" and flight["culprits"] == [455]
    assert flight["missing_dumps"] == [455] and flight["waiting"] == 511
    assert (flight["group"], flight["operation"]) == ("pg 0 (default_pg)", "nccl:all_reduce")
    assert flight["waiting_call_site"] == "/workspace/llama/train.py:143 in sync_gradients"
    assert str(flight["seq"]) in hang["summary"]


def test_no_hang_no_hang_key(tmp_path) -> None:
    settings = load_settings(environ={})
    clock = FakeClock(START + 20.0)
    source = demo_source(DemoSettings(8, 8, 7), clock, started=START, log_root=tmp_path)
    findings = collect(settings, ThreadEngine(settings, source), 0.0, clock=clock,
                       sleep=lambda s: None)
    assert json.loads(as_json(findings, settings))["hang"] is None


def test_the_flag_and_the_key_set_the_pattern_and_refuse_a_bad_one(tmp_path, capsys) -> None:
    settings = load_settings(overrides={"logs": {"flight_recorder": "/fr/rank_{rank}"}},
                             environ={})
    assert settings.flight_recorder == "/fr/rank_{rank}"
    assert load_settings(environ={}).flight_recorder == ""
    code = main(["report", "--demo", "--flight-recorder", "/fr/{host}_{rank}"])
    err = capsys.readouterr().err
    assert code == 2 and "--flight-recorder" in err and "{host}" in err
    assert len(err.strip().splitlines()) == 1
    config = tmp_path / "c.toml"
    config.write_text('[logs]\nflight_recorder = "/fr/{node}"\n')
    assert main(["report", "--demo", "--config", str(config)]) == 2
    assert "logs.flight_recorder" in capsys.readouterr().err


def test_a_report_started_long_after_the_dumps_landed_names_the_culprit(tmp_path) -> None:
    # Rank 11 froze at 30 s, the others dumped at ~60 s; the report starts at 160 s, so its
    # replay of the past first judges 90 s in which the job never moved, then a longer
    # stretch that sees the step's last advance: the dumps read then are this hang's still.
    fault = Fault("collective_hang", 11, 30.0, 260.0, {"cause": "missing", "dumps": "pickle"})
    cluster = SimCluster(4, 8, 7, Scenario("late", 300.0, 1.12, 1, (fault,)))
    clock = FakeClock(START + 160.0)
    dumps = FlightWriter(cluster, tmp_path / FLIGHT_FOLDER, 7, epoch=START)
    writer = LogWriter(cluster, tmp_path / "logs", seed=7, epoch=START, flight=dumps)
    source = DemoSource(cluster, clock, START, writer)
    settings = load_settings(environ={}, overrides={"logs": {
        "spec": str(tmp_path / "elsewhere" / "{rank}.log"),  # the dumps alone speak
        "flight_recorder": str(tmp_path / FLIGHT_FOLDER)}})

    def sleep(seconds: float) -> None:
        clock.now += seconds

    findings = collect(settings, ThreadEngine(settings, source), 6.0, clock=clock, sleep=sleep)
    landed = [p.stat().st_mtime - START for p in (tmp_path / FLIGHT_FOLDER).iterdir()]
    assert landed and max(landed) < 100.0
    flight = json.loads(as_json(findings, settings))["hang"]["flight_recorder"]
    assert flight["verdict"] == "missing" and flight["culprits"] == [11]
