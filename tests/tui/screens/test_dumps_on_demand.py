"""Dumps on demand from the hang evidence screen: off unless configured, and then nothing is
written before the user has read what will be written where and said yes."""

from __future__ import annotations

from pathlib import Path

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.core.hang.triage import HangVerdict
from ranktop.tui.screens.confirm_dumps import ConfirmDumpsScreen
from ranktop.tui.screens.evidence import EvidenceScreen
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock, screen_text
from tests.tui.flight.test_pipes import listen

VERDICT = HangVerdict(reporting=[0], silent=[], behind=[3], last_completed={}, evidence={},
                      summary="rank 3 is dead")


def app_with(logs: dict) -> RanktopApp:
    clock = FakeClock(START + 20.0)
    source = demo_source(DemoSettings(1, 8, seed=7), clock, started=START)
    settings = load_settings(overrides={"logs": logs}, environ={})
    return RanktopApp(settings, source, clock=clock, poll=False)


def notes(app: RanktopApp) -> list[str]:
    return [note.message for note in app._notifications]


async def open_evidence(app: RanktopApp, pilot) -> None:
    await app.poll_once()
    app.push_screen(EvidenceScreen(VERDICT, app.cluster.rank_map))
    await pilot.pause()


async def wait_for(pilot, check, tries: int = 100) -> None:
    for _ in range(tries):
        if check():
            return
        await pilot.pause(0.05)
    raise AssertionError("never happened")


async def test_off_by_default_the_key_only_says_how_to_turn_it_on(tmp_path: Path) -> None:
    got: list[bytes] = []
    listen(tmp_path / "trace_0.pipe", got)
    app = app_with({"dump_pipes": str(tmp_path / "trace_")})  # pipes named, not enabled
    async with app.run_test(size=(120, 40)) as pilot:
        await open_evidence(app, pilot)
        assert "asks every rank" not in screen_text(app)
        await pilot.press("d")
        await pilot.pause(0.2)
        assert isinstance(app.screen, EvidenceScreen)
        assert any("Dumps on demand are off" in m for m in notes(app))
    assert got == []


async def test_confirmed_it_writes_one_byte_to_each_pipe_and_cancelled_nothing(
        tmp_path: Path) -> None:
    got: list[bytes] = []
    listeners = [listen(tmp_path / f"trace_{r}.pipe", got) for r in (0, 1)]
    app = app_with({"dump_pipes": str(tmp_path / "trace_"), "request_dumps": True})
    async with app.run_test(size=(140, 40)) as pilot:
        await open_evidence(app, pilot)
        assert "d asks every rank for a Flight Recorder dump" in screen_text(app)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDumpsScreen))
        text = screen_text(app)
        assert "into each of 2 named pipes (FIFOs), and nothing else anywhere" in text
        assert "trace_0.pipe" in text and "6 of 8 ranks have no pipe" in text
        await pilot.press("n")  # cancelled: nothing written
        await wait_for(pilot, lambda: isinstance(app.screen, EvidenceScreen))
        await pilot.pause(0.2)
        assert got == []
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDumpsScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: len(got) == 2)
        await wait_for(pilot, lambda: "asked 2 ranks for a Flight Recorder dump"
                       in notes(app))
    for thread in listeners:
        thread.join(5)
    assert got == [b"1", b"1"]
    assert not any(p.is_file() for p in tmp_path.iterdir())  # ranktop wrote no file
