"""The rank screen's log through either engine: the same lines shown, and through an engine
in its own process, the log back after that engine was restarted."""

from __future__ import annotations

import os
import signal
from dataclasses import replace
from pathlib import Path

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.engine.process import ProcessEngine
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.screens import rank_lines, rank_requests
from ranktop.tui.screens.rank import RankScreen
from ranktop.tui.settings.config import Settings, load_settings
from ranktop.widgets.log_view import LogView

from tests.tui.conftest import screen_text
from tests.tui.engine.test_logs_on_both_engines import stamped, write
from tests.tui.engine.test_process import demo_at_40

RANK = 5


async def until(pilot, check, tries: int = 1200) -> None:
    """Let the app run until ``check()`` holds (the log's worker, a thread, posts its lines
    when it has read them; a busy machine takes longer)."""
    for _ in range(tries):
        if check():
            return
        await pilot.pause(0.05)
    raise AssertionError("never came")


def with_logs(tmp_path: Path) -> Settings:
    write(tmp_path / f"rank{RANK}.err.log", stamped(0, 400, "step"))
    write(tmp_path / f"rank{RANK}.out.log", stamped(100, 50, "NCCL WARN ✗ timeout"))
    return replace(load_settings(environ={}), log_spec=str(tmp_path / "rank{rank}.*.log"))


def drawn_notes(monkeypatch) -> list[str]:
    """Every note the rank screen's log title is drawn with, kept: a note can be drawn over
    a moment later (the log's worker retries every ``FOLLOW_SECONDS``), before a busy
    machine shows it."""
    notes: list[str] = []
    draw = rank_lines.log_title

    def recorded(*args, **kwargs):
        notes.append(args[5])
        return draw(*args, **kwargs)

    monkeypatch.setattr(rank_lines, "log_title", recorded)
    return notes


async def shown_log(engine) -> list[tuple[str, str]]:
    app = RanktopApp(load_settings(), engine=engine, poll=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        app.open_rank(RANK)
        await pilot.pause()
        log = app.screen.query_one(LogView)
        await until(pilot, lambda: len(log.lines) == 350)
        return list(zip(log.lines, log.origins, strict=True))


async def test_the_rank_screen_shows_the_same_log_through_either_engine(tmp_path):
    settings = with_logs(tmp_path)
    local = ThreadEngine(settings, demo_at_40(settings))
    apart = ProcessEngine(settings, demo_at_40)
    try:
        assert await shown_log(apart) == await shown_log(local)
    finally:
        apart.close()
        local.close()


async def test_the_log_comes_back_after_its_engine_process_is_restarted(tmp_path, monkeypatch):
    monkeypatch.setattr(rank_requests, "FOLLOW_SECONDS", 0.05)
    notes = drawn_notes(monkeypatch)
    engine = ProcessEngine(with_logs(tmp_path), demo_at_40)
    app = RanktopApp(load_settings(), engine=engine, poll=False)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await app.poll_once()
            await pilot.pause()
            app.open_rank(RANK)
            await pilot.pause()
            assert isinstance(app.screen, RankScreen)
            log = app.screen.query_one(LogView)
            await until(pilot, lambda: len(log.lines) == 350)
            os.kill(engine.pid, signal.SIGKILL)
            # once the worker's next try cannot open the log, it says "no log: ..." instead
            await until(pilot, lambda: any(note.startswith("the log stopped: the engine "
                                                           "process stopped") for note in notes))
            write(tmp_path / f"rank{RANK}.err.log", ["written while it was away"])
            await app.poll_once()  # the app restarts its engine
            await until(pilot, lambda: log.lines and log.lines[-1][1] == "written while it"
                        " was away")
            assert len(log.lines) == 350 and engine.restarts == 1  # the new tail, in place
            assert "rank5.err.log" in screen_text(app)
    finally:
        engine.close()
