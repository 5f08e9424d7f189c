"""A report started late says what a console that had been watching says: the job's loss
judged against its usual level before the report began, a rank dead before it as missing."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ranktop.tui.cli.report import collect
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.scenario import load_scenario
from ranktop.tui.sources.demo import DemoSource

from tests.tui.cli.test_report import report_at
from tests.tui.conftest import START, FakeClock

# The loss jumps at 100 s and then creeps up: within any 20 s after the jump it rises less
# than the rule's 25 %, so only its level before the jump shows the divergence.
SLOW_DIVERGENCE = """
name = "slow-divergence"
loop_seconds = 300
base_step_seconds = 1.12
tokens_per_step = 4194304
[[fault]]
effect = "loss_divergence"
start = 100
duration = 190
"""


def source(at: float, scenario: Path | None = None, nodes: int = 8) -> DemoSource:
    cluster = SimCluster(nodes, 8, 7, load_scenario(scenario))
    return DemoSource(cluster, FakeClock(START + at), started=START)


def console(at: float, until: float, scenario: Path | None = None, nodes: int = 8) -> set:
    """What a console polling from ``at`` shows at ``until``: (kind, rank, severity)."""
    demo = source(at, scenario, nodes)
    pipeline = Pipeline(load_settings(environ={}), demo, clock=demo.clock)
    while demo.clock.now <= START + until:
        analysis = asyncio.run(pipeline.poll())
        demo.clock.now += 2.0
    return {(a.kind, a.rank, a.severity) for a in analysis.anomalies}


def report(at: float, duration: float, scenario: Path | None = None) -> set:
    demo = source(at, scenario)

    def sleep(seconds: float) -> None:
        demo.clock.now += seconds

    settings = load_settings(environ={})
    findings = collect(settings, ThreadEngine(settings, demo), duration, clock=demo.clock,
                       sleep=sleep)
    return {(a.kind, a.rank, a.severity) for a in findings.active}


def test_a_report_over_20_s_after_the_loss_jumped_sees_the_divergence_as_the_console(
        tmp_path):
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(SLOW_DIVERGENCE, encoding="utf-8")
    shown = console(60.0, 130.0, scenario)
    assert ("loss", None, "critical") in shown
    assert ("loss", None, "critical") in report(110.0, 20.0, scenario)


def test_a_short_report_during_the_demo_s_divergence_sees_it_as_the_console():
    assert ("loss", None, "critical") in console(230.0, 270.0)
    assert ("loss", None, "critical") in report(266.0, 4.0)


def test_a_rank_dead_before_the_report_began_is_missing_as_on_the_console():
    # rank 455 died at 172 s; a console watching since 160 s calls it missing (critical)
    assert ("missing", 455, "critical") in console(160.0, 196.0, nodes=64)
    findings, _ = report_at(196.0, 4.0)
    dead = {a.kind: a for a in findings.active if a.rank == 455}
    assert (dead["missing"].severity, dead["xid"].severity) == ("critical", "critical")
    assert dead["missing"].since == START + 172.0  # gone then, not at 196 s
    assert dead["xid"].since == START + 170.0  # its GPU's XID, before the report began
