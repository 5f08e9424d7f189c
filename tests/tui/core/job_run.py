"""A simulated job with scripted faults, polled through the console's own pipeline: the
simulator's frames and log files -> the log reader and hang triage -> the analysis."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

from ranktop.tui.core.analysis import Analysis
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.log_writer import LogWriter
from ranktop.tui.simulator.scenario import Fault, Scenario
from ranktop.tui.sources.demo import DemoSource

from tests.tui.conftest import START, FakeClock
from tests.tui.logs.test_triage_worker import WAIT

POLL = 2.0


def job(faults: tuple[Fault, ...], nodes: int = 4, gpus: int = 8,
        loop: float = 300.0) -> SimCluster:
    return SimCluster(nodes, gpus, seed=3, scenario=Scenario("job", loop, 1.12, 4194304,
                                                             faults))


def polls(cluster: SimCluster, log_root: Path, until: float, since: float = 0.0,
          logs: bool = True) -> Iterator[Analysis]:
    """Every poll's analysis from ``since`` to ``until`` seconds into the scenario, 2 s
    apart; each poll shows the hang triage the one before it asked for, as when a triage
    finishes within a refresh. ``logs=False``: no log is configured."""
    clock = FakeClock(START + since)
    writer = LogWriter(cluster, log_root, seed=3, epoch=START) if logs else None
    source = DemoSource(cluster, clock, START, writer)
    overrides = {"logs": {"spec": writer.layout_spec}} if writer else {}
    pipeline = Pipeline(load_settings(overrides=overrides, environ={}), source, clock=clock)
    while clock.now <= START + until:
        source.flush_logs()
        analysis = asyncio.run(pipeline.poll())
        if pipeline.triage is not None:
            assert pipeline.triage.wait(WAIT)
        yield analysis
        clock.now += POLL


def hang_rows(analysis: Analysis) -> list:
    return [a for a in analysis.anomalies if a.kind == "hang"]
