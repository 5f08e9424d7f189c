"""Every number survives: frames whose values are past what a 32-bit float holds, infinite,
NaN or subnormal go through the engine's analysis, the wire to the UI, the maps' planning,
`report --json` and `report --bundle` without a crash, and every JSON written is valid."""

from __future__ import annotations

import contextlib
import io
import json
import math
from dataclasses import replace
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import example, given, settings
from hypothesis import strategies as st
from ranktop.tui.app.console import RanktopApp
from ranktop.tui.cli.main import _report_bundle
from ranktop.tui.cli.report import as_json, as_text, collect
from ranktop.tui.core.maps.levels import MapShape
from ranktop.tui.engine.maps import MapBoard, MapGeometry
from ranktop.tui.engine.process import ProcessEngine
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.engine.wire import Received, Sent
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.sources.base import Source
from ranktop.tui.sources.demo import DemoSource, demo_source

from tests.tui.conftest import START, FakeClock, screen_text
from tests.tui.properties import FEW

NODES, GPUS = 2, 8
EXTREMES = st.sampled_from([
    1e308, -1e308, math.inf, -math.inf, math.nan, 1e-320, -1e-320, 3.5e38, -3.5e38,
    3.4028235e38, 1.7976931348623157e308, float(2**64), 1e30, -0.0])
# Per metric: the values written over its ranks' (cycled), and whether over every rank.
PATTERNS = st.lists(st.tuples(st.lists(EXTREMES, min_size=1, max_size=4), st.booleans()),
                    min_size=1, max_size=6)


class Extreme(Source):
    """The demo with each metric's values, and the job's, written over by a pattern of
    extreme ones."""

    def __init__(self, demo, patterns) -> None:
        self.demo, self.patterns = demo, patterns
        self.name, self.job_name = demo.name, demo.job_name
        self.polls = 0

    @property
    def rank_map(self):
        return self.demo.rank_map

    def status(self):
        return self.demo.status()

    async def poll(self):
        frame = await self.demo.poll()
        self.polls += 1
        if self.polls == 1:  # as the demo is: the job known, then its values turn extreme
            return frame
        values = {}
        for index, (metric, found) in enumerate(sorted(frame.values.items())):
            pattern, everywhere = self.patterns[index % len(self.patterns)]
            values[metric] = [pattern[(rank + index) % len(pattern)]
                              if everywhere or rank < len(pattern) else value
                              for rank, value in enumerate(found)]
        pattern, _ = self.patterns[0]
        job = {name: pattern[index % len(pattern)] for index, name in enumerate(frame.job)}
        return replace(frame, values=values, job=job)


def strict_json(text: str) -> object:
    """``text`` as JSON, refusing NaN and Infinity (which are not JSON)."""
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in JSON")
    return json.loads(text, parse_constant=refuse)


@settings(FEW, max_examples=25)
@given(PATTERNS)
@example([([1e-320, -1e308], False)])  # a restart from step -3.4e38 ended a bundle's writing
def test_extreme_values_cross_every_path_without_a_crash(patterns):
    config = load_settings(environ={})
    clock = FakeClock(START + 200)
    demo = demo_source(DemoSettings(NODES, GPUS, 7), clock, started=START)
    engine = ThreadEngine(config, Extreme(demo, patterns))

    def sleep(seconds: float) -> None:
        clock.now += seconds

    try:
        findings = collect(config, engine, 3 * config.refresh_seconds, clock=clock,
                           sleep=sleep)
        assert not findings.error, findings.error  # the analysis did not fail
        strict_json(as_json(findings, config))
        assert as_text(findings, config)
        received = Received().unpack(Sent().compact(engine.latest)).analysis
        for values in received.frame.values.values():
            assert not any(math.isinf(v) for v in values)
        ranks = len(received.rank_map)
        board = MapBoard()
        board.reshape([MapGeometry(m, m, MapShape("high", ranks, None, 1, 0))
                       for m in received.frame.values])
        assert set(board.plan(received)) == set(received.frame.values)
        with TemporaryDirectory() as folder, contextlib.redirect_stderr(io.StringIO()):
            assert _report_bundle(config, engine, findings, Path(folder))
            for written in Path(folder).rglob("*.json"):
                strict_json(written.read_text())
    finally:
        engine.close()


class FarCluster(SimCluster):
    """The demo's job with rank 0's values all -1e308 and rank 1's 1e308 (the campaign's
    values: infinities as 32-bit floats)."""

    def frame_at(self, t: float):
        frame = super().frame_at(t)
        values = {metric: [-1e308, 1e308, *found[2:]] for metric, found in frame.values.items()}
        return replace(frame, values=values)


def far_demo(settings) -> DemoSource:
    """The engine process's source: ``FarCluster`` 200 s into the scenario, its clock still."""
    return DemoSource(FarCluster(NODES, GPUS, seed=7), lambda: START + 200, START)


async def test_the_console_shows_values_past_a_32_bit_float_from_an_engine_process():
    engine = ProcessEngine(load_settings(environ={}), far_demo)
    app = RanktopApp(load_settings(), engine=engine, poll=False, clock=lambda: START + 200)
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            for _ in range(3):
                await app.poll_once()
                await pilot.pause()
            assert engine.restarts == 0 and "/16 up" in screen_text(app)
            for rank in (0, 1):
                app.open_rank(rank)
                await pilot.pause()
                assert "e+38" in screen_text(app)  # said short, as it came
                await pilot.press("escape")
                await pilot.pause()
            assert app.is_running
    finally:
        engine.close()
