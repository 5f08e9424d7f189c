"""A bundle reopened asks no rank for anything: with dumps on demand configured and enabled,
`d` on the evidence screen writes no pipe and says a bundle is read-only."""

from __future__ import annotations

from pathlib import Path

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.bundle.make import Screen, make_bundle
from ranktop.tui.bundle.opened import BundleEngine
from ranktop.tui.bundle.read import read_bundle
from ranktop.tui.screens.evidence import EvidenceScreen
from ranktop.tui.settings.config import load_settings

from tests.tui.bundle.test_open_backend import demo_engine
from tests.tui.conftest import START, FakeClock
from tests.tui.flight.test_pipes import listen
from tests.tui.screens.test_dumps_on_demand import VERDICT, notes, wait_for


async def test_a_reopened_bundle_refuses_to_ask_the_ranks_for_dumps(tmp_path: Path):
    got: list[bytes] = []
    listen(tmp_path / "trace_0.pipe", got)  # a live job's rank, listening
    clock = FakeClock(START + 30.0)
    writer = demo_engine(clock, None)
    await writer.poll()
    path = await make_bundle(writer, load_settings(), writer.latest, None, Screen(), tmp_path)
    writer.close()
    saved = read_bundle(path)
    settings = load_settings(overrides={"logs": {"dump_pipes": str(tmp_path / "trace_"),
                                                 "request_dumps": True}}, environ={})
    app = RanktopApp(settings, engine=BundleEngine(saved), poll=False, clock=clock,
                     bundle=saved.moment)
    async with app.run_test(size=(140, 40)) as pilot:
        app.push_screen(EvidenceScreen(VERDICT, app.cluster.rank_map))
        await pilot.pause()
        await pilot.press("d")
        await wait_for(pilot, lambda: any("read-only" in m for m in notes(app)))
        assert isinstance(app.screen, EvidenceScreen)  # no confirmation: nothing to confirm
    assert got == []
