"""A bundle written after the demo's restart keeps it on record: in analysis.json's resolved
list, and on the reopened console's panel."""

from __future__ import annotations

import json

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.bundle.opened import BundleEngine
from ranktop.tui.bundle.read import read_bundle
from ranktop.tui.settings.config import load_settings

from tests.tui.bundle.test_bundle_key import written_bundle
from tests.tui.conftest import make_app
from tests.tui.screens.test_restart_rows import BACK_AT, DYING_RANK, polled, restart_rows


async def test_a_bundle_after_the_restart_has_it_on_record_and_reopens_with_its_row(
        tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    app = make_app(at=166.0, log_root=tmp_path / "logs")
    async with app.run_test(size=(160, 45)) as pilot:
        await polled(app, pilot, 166.0, BACK_AT + 6)
        (restart,) = app.analysis.restarts
        bundle = await written_bundle(app, pilot, out, monkeypatch)
    document = json.loads((bundle / "analysis.json").read_text())
    (entry,) = [a for a in document["resolved"] if a["kind"] == "restart"]
    assert entry["rank"] == DYING_RANK and entry["summary"] == restart.summary

    saved = read_bundle(bundle)
    opened = RanktopApp(load_settings(), engine=BundleEngine(saved), poll=False,
                        bundle=saved.moment)
    async with opened.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        assert opened.analysis.restarts == (restart,)
        assert len(restart_rows(opened)) == 1
