"""Before the source's first answer the console says it is waiting, and for how long: no
all-clear, no count of ranks up, no health; the first answer replaces it, paused or not."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ranktop.tui.screens.advice import AdviceScreen
from ranktop.tui.screens.rank import RankScreen

from tests.tui.app.test_moments import replayed
from tests.tui.conftest import START, make_app, screen_text


def stuck_first_poll(app) -> threading.Event:
    """Hold the source's polls until the returned event is set (a backend under load)."""
    release = threading.Event()
    read = app.engine.source._read

    def held_read(t: float):
        release.wait(30)
        return read(t)

    app.engine.source._read = held_read
    return release


@asynccontextmanager
async def first_poll_held(app) -> AsyncIterator[tuple]:
    """The app running with its first poll asked and held: (pilot, the event that lets the
    poll through, the poll); the poll is let through and awaited at the end."""
    release = stuck_first_poll(app)
    async with app.run_test(size=(120, 40)) as pilot:
        polling = asyncio.ensure_future(app.poll_once())
        try:
            yield pilot, release, polling
        finally:
            release.set()
            await polling


def says_nothing_is_known(text: str) -> None:
    assert "✓" not in text and "no anomalies" not in text
    assert " up" not in text and "● ok" not in text
    assert "ranks: no answer yet (512 in the rank map)" in text


async def test_before_the_first_answer_it_says_it_waits_and_for_how_long():
    app = make_app(at=1.0)  # a healthy job
    async with first_poll_held(app) as (pilot, release, polling):
        await pilot.pause()
        text = screen_text(app)
        says_nothing_is_known(text)
        waiting = "◌ waiting for the first answer from demo (simulated)… 0.0 s"
        assert text.count(waiting) == 2  # the header and the anomaly panel
        app.clock.now += 7
        app.cluster._tick()  # the screen's clock, each second
        await pilot.pause()
        text = screen_text(app)
        says_nothing_is_known(text)
        assert text.count("waiting for the first answer from demo (simulated)… 7.0 s") == 2
        release.set()
        await polling
        await pilot.pause()
        text = screen_text(app)
        assert "waiting" not in text and "ranks 512/512 up" in text
        assert "checking…" in text  # the detectors' own wait follows, still no all-clear


async def test_advice_asked_before_the_first_answer_says_it_waits():
    app = make_app()
    async with first_poll_held(app) as (pilot, _, _):
        await pilot.press("a")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert said == ["◌ waiting for the first answer from demo (simulated)… 0.0 s"]
        assert not isinstance(app.screen, AdviceScreen)


async def test_a_rank_opened_before_the_first_answer_is_not_called_clear():
    app = make_app()
    async with first_poll_held(app) as (pilot, _, _):
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RankScreen)
        text = screen_text(app)
        assert "no answer from the source yet: nothing judged" in text
        assert "✓" not in text


async def test_a_first_answer_that_comes_while_paused_is_shown_all_the_same():
    app = make_app()
    async with first_poll_held(app) as (pilot, release, polling):
        await pilot.press("p")
        release.set()
        await polling
        await pilot.pause()
        text = screen_text(app)
        assert "PAUSED" in text and "ranks 512/512 up" in text and "waiting" not in text


async def test_back_from_a_past_moment_before_the_first_answer_it_waits_again(tmp_path):
    app = make_app(at=60.0, log_root=tmp_path)
    app.opens_at = START + 30.0  # `ranktop --at`: the past is replayed before any live poll
    async with app.run_test(size=(160, 45)) as pilot:
        await replayed(app, pilot)
        text = screen_text(app)
        assert app.moment == START + 30.0 and "waiting" not in text
        app.clock.now += 4
        await pilot.press("L")
        await replayed(app, pilot, ("live",))
        text = screen_text(app)
        assert app.moment is None
        assert text.count("waiting for the first answer from demo (simulated)… 4.0 s") == 2
        says_nothing_is_known(text)


async def test_the_rank_status_line_is_laid_out_by_the_screen_from_the_first_frame():
    app = make_app(at=20.0)
    async with app.run_test(size=(120, 40)) as pilot:
        status = app.cluster.query_one("#rank-status")
        status.styles.width = 3  # a line not laid out yet: a few cells wide
        await app.poll_once()
        await pilot.pause()
        assert str(status.render()).count("\n") <= 1  # its values two lines, not one a line
