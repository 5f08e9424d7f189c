"""A bundle reopened with its backend: the keys that step through time ask the backend for
the moments before the bundle's, said as such, and the live key goes back to the bundle's
moment, never to a live job the bundle does not show. Without a backend, a step says why
there is nothing to step to."""

from __future__ import annotations

import asyncio

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.bundle.make import Screen, make_bundle
from ranktop.tui.bundle.opened import BundleEngine
from ranktop.tui.bundle.read import read_bundle
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock, screen_text
from tests.tui.screens.test_dumps_on_demand import wait_for


def demo_engine(clock: FakeClock, logs) -> ThreadEngine:
    source = demo_source(DemoSettings(64, 8, seed=7), clock, started=START, log_root=logs)
    return ThreadEngine(load_settings(), source, clock=clock)


def header(app) -> str:
    return screen_text(app).splitlines()[0]


async def test_with_its_backend_a_bundle_steps_to_earlier_moments_and_back(tmp_path):
    clock = FakeClock(START + 180.0)
    writer = demo_engine(clock, tmp_path / "logs")
    for _ in range(3):
        await writer.poll()
        clock.now += 2.0
    path = await make_bundle(writer, load_settings(), writer.latest, None, Screen(), tmp_path)
    writer.close()
    saved = read_bundle(path)
    backend = demo_engine(clock, tmp_path / "logs-2")
    app = RanktopApp(load_settings(), engine=BundleEngine(saved, backend), poll=False,
                     clock=clock, bundle=saved.moment)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: "BUNDLE OF" in header(app))  # the bundle's analysis
        assert "not live" in header(app)
        await pilot.press("less_than_sign")  # a minute before the bundle: from the backend
        await wait_for(pilot, lambda: "AT " in header(app))
        assert app.moment == saved.moment - 60.0
        assert "press L for the bundle" in header(app)
        assert 455 not in app.moment_analysis.down  # before rank 455 died
        await pilot.press("L")
        await wait_for(pilot, lambda: "BUNDLE OF" in header(app))
        assert app.moment == saved.moment and 455 in app.cluster.analysis.down
    app.engine.close()


async def test_without_a_backend_a_step_says_a_bundle_holds_one_moment(tmp_path):
    clock = FakeClock(START + 30.0)
    writer = demo_engine(clock, None)
    await writer.poll()
    path = await make_bundle(writer, load_settings(), writer.latest, None, Screen(), tmp_path)
    saved = read_bundle(path)
    app = RanktopApp(load_settings(), engine=BundleEngine(saved), poll=False, clock=clock,
                     bundle=saved.moment)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("comma")
        await wait_for(pilot, lambda: app._notifications)
        (said,) = [n.message for n in app._notifications]
        assert "a bundle holds one moment" in said
        assert app.moment == saved.moment and "BUNDLE OF" in header(app)


def test_a_bundle_keeps_what_it_shows_when_asked_for_a_rank_it_did_not_save(tmp_path):
    clock = FakeClock(START + 30.0)
    writer = demo_engine(clock, None)
    asyncio.run(writer.poll())
    path = asyncio.run(make_bundle(writer, load_settings(), writer.latest, 3, Screen(),
                                   tmp_path))
    engine = BundleEngine(read_bundle(path))
    rank_map = engine.latest.analysis.rank_map
    assert engine.open_logs(rank_map, 3)[1] != engine.open_logs(rank_map, 400)[1]
    assert "not saved in the bundle" in engine.open_logs(rank_map, 400)[1]
    assert "not saved in the bundle" in engine.alert_rows(rank_map.ranks[400])[1]
