"""A rank's log that is no log: a FIFO, a symlink loop, /dev/zero, a folder, a file
replaced by a folder while followed, a file that cannot be read. Driven through the real
rank screen (Pilot): each is a message in the log pane's title, the screen keeps answering
keys, and nothing hangs (a FIFO or /dev/zero read would block or never end)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from ranktop.tui.app.console import RanktopApp
from ranktop.tui.screens.rank import RankScreen
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source
from ranktop.widgets.log_view import LogView

from tests.special_files import fifo, folder, loop, zero
from tests.tui.conftest import START, FakeClock, screen_text

# More than the rank screen's follow interval (1 s): the pane has had its chance to say.
WAIT_SECONDS = 4.0


def app_with_logs(pattern: Path) -> RanktopApp:
    """The demo (2 nodes) with every rank's log at ``pattern`` ({rank} filled in)."""
    clock = FakeClock(START + 20)
    source = demo_source(DemoSettings(2, 8, seed=7), clock, started=START)
    settings = load_settings(overrides={"logs": {"spec": str(pattern)}}, environ={})
    return RanktopApp(settings, source, clock=clock, poll=False)


async def pane_says(app, pilot, *wanted: str) -> str:
    """The log pane's note once it holds one of ``wanted`` (AssertionError after a while)."""
    for _ in range(int(WAIT_SECONDS / 0.2)):
        note = app.screen.log_note
        if any(text in note for text in wanted):
            return note
        await pilot.pause(0.2)
    raise AssertionError(f"the log pane says {app.screen.log_note!r}, not {wanted}")


async def open_rank_zero(app, pilot) -> None:
    await app.poll_once()
    await pilot.pause()
    await pilot.press("slash", "0", "enter", "enter")
    await pilot.pause()
    assert isinstance(app.screen, RankScreen)


async def assert_keys_answered(app, pilot) -> None:
    log = app.screen.query_one(LogView)
    for _ in range(4):
        before = log.following
        await pilot.press("f")
        assert log.following != before


@pytest.mark.parametrize("make", [fifo, loop, zero, folder],
                         ids=["fifo", "symlink-loop", "dev-zero", "folder"])
async def test_a_log_that_is_no_file_is_said_in_the_log_pane(tmp_path, make):
    make(tmp_path / "rank0.log")
    app = app_with_logs(tmp_path / "rank{rank}.log")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_rank_zero(app, pilot)
        note = await pane_says(app, pilot, "rank0.log")
        print(f"\n{make.__name__}: {note}")
        assert "no regular file" in note or "not a regular file" in note, note
        assert " ".join(note.split()[:3]) in " ".join(screen_text(app).split())
        assert not app.screen.query_one(LogView).lines  # nothing read from it
        await assert_keys_answered(app, pilot)


async def test_a_log_replaced_by_a_folder_while_followed_is_said(tmp_path):
    path = tmp_path / "rank0.log"
    path.write_text("[rank 0] step 1 loss 2.1\n")
    app = app_with_logs(tmp_path / "rank{rank}.log")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_rank_zero(app, pilot)
        await pane_says(app, pilot, "rank0.log in")
        path.unlink()
        path.mkdir()
        note = await pane_says(app, pilot, "error:")
        assert "not a regular file" in note
        assert any("step 1" in text for _, text in app.screen.query_one(LogView).lines)
        await assert_keys_answered(app, pilot)


async def test_a_log_that_cannot_be_read_is_said(tmp_path, monkeypatch):
    # Tests run as root, whom file modes do not stop: the refusal is the kernel's answer
    # (tests/tui/logs/test_permission.py has the real one, as an unprivileged user).
    path = tmp_path / "rank0.log"
    path.write_text("secret\n")
    real_open = os.open

    def refused(name, flags, *args):
        if Path(name) == path:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real_open(name, flags, *args)

    monkeypatch.setattr(os, "open", refused)
    app = app_with_logs(tmp_path / "rank{rank}.log")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_rank_zero(app, pilot)
        note = await pane_says(app, pilot, "error:")
        assert os.strerror(errno.EACCES) in note
        await assert_keys_answered(app, pilot)
