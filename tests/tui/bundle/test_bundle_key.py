"""The bundle key during the demo's hang, and the bundle reopened in a second console with
no source: the same hang verdict and the same anomalies, said to be a bundle, not live."""

from __future__ import annotations

import json

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.bundle.opened import BundleEngine
from ranktop.tui.bundle.read import read_bundle
from ranktop.tui.settings.config import load_settings

from tests.tui.conftest import make_app, screen_text
from tests.tui.screens.test_dumps_on_demand import wait_for
from tests.tui.screens.test_incident_rows import panel_rows, watched


async def written_bundle(app, pilot, folder, monkeypatch):
    monkeypatch.chdir(folder)
    await pilot.press("B")
    # the bundle's worker only: a rank screen's log worker follows its file for ever
    await wait_for(pilot, lambda: not app.bundle_writing, tries=1200)
    await pilot.pause()
    (bundle,) = folder.glob("*.ranktop")
    return bundle


async def test_the_key_during_the_hang_writes_a_bundle_that_reopens_with_the_same_verdicts(
        tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    app = make_app(at=174.0, log_root=tmp_path / "logs")  # rank 455 died at 172 s
    async with app.run_test(size=(120, 40)) as pilot:
        await watched(app, pilot, 20)
        hang = app.analysis.hang
        assert hang is not None and hang.behind == [455]
        kinds = sorted((a.kind, a.rank, a.state) for a in app.analysis.anomalies)
        row = panel_rows(app, 455)
        bundle = await written_bundle(app, pilot, out, monkeypatch)
        (said,) = [n.message for n in app._notifications if n.title == "bundle"]
        assert said.startswith(f"bundle written: {bundle}\nreadable by ")
        assert "only (mode 0700" in said and f"chmod -R go+rX {bundle}" in said
    assert bundle.name.startswith("llama-70b-pretrain-") and bundle.is_dir()
    document = json.loads((bundle / "analysis.json").read_text())
    assert document["hang"]["summary"] == hang.summary
    assert "rank 455" in (bundle / "screen.txt").read_text()
    assert (bundle / "screen.svg").read_text().startswith("<svg")

    saved = read_bundle(bundle)
    opened = RanktopApp(load_settings(), engine=BundleEngine(saved), poll=False,
                        bundle=saved.moment)
    async with opened.run_test(size=(120, 40)) as pilot:
        # the panel drawn (a pause's worth of drawing is not enough on a loaded machine)
        await wait_for(pilot, lambda: panel_rows(opened, 455), tries=1200)
        assert opened.engine.latest.analysis.hang.summary == hang.summary
        assert sorted((a.kind, a.rank, a.state) for a in opened.analysis.anomalies) == kinds
        assert panel_rows(opened, 455) == row
        header = screen_text(opened).splitlines()[0]
        assert "BUNDLE OF" in header and "not live" in header
        await pilot.press("n", "enter")  # the dead rank's screen, with its saved log lines
        await wait_for(pilot, lambda: "saved in the bundle" in screen_text(opened))
        shown = screen_text(opened)
        assert "rank 455" in shown and "BUNDLE OF" in shown
        assert "saved in the bundle" in shown and "the tail as the bundle saved it" in shown
        assert "CUDA error" in shown or "Xid" in shown or "XID" in shown


async def test_the_evidence_screen_writes_a_bundle_of_itself(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    app = make_app(at=174.0, log_root=tmp_path / "logs")
    async with app.run_test(size=(120, 40)) as pilot:
        await watched(app, pilot, 20)
        await pilot.press("e")  # the hang's evidence, over the cluster screen
        await pilot.pause()
        assert "Evidence" in type(app.screen).__name__
        bundle = await written_bundle(app, pilot, out, monkeypatch)
    assert app.analysis.hang.summary[:40] in (bundle / "screen.txt").read_text()


async def test_the_rank_screen_writes_a_bundle_of_itself(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    app = make_app(at=174.0, log_root=tmp_path / "logs")
    async with app.run_test(size=(120, 40)) as pilot:
        await watched(app, pilot, 20)
        await pilot.press("n", "enter")  # rank 455's screen
        await pilot.pause()
        assert "Rank" in type(app.screen).__name__
        bundle = await written_bundle(app, pilot, out, monkeypatch)
    screen = (bundle / "screen.txt").read_text()
    assert "rank 455  gpu-node-056" in screen and "SM activity" in screen
    assert read_bundle(bundle).selected == 455
