"""Once the console has given the terminal back, the process ends within a grace period,
even while a worker thread is still busy with a poll nobody will see (at 100,000 ranks a
demo frame takes seconds): its cleanups run, and the exit status is the app's."""

from __future__ import annotations

import asyncio
import threading

from ranktop.tui.app import console as app_module

from tests.tui.conftest import make_app


async def test_the_process_ends_soon_after_the_screen_is_gone_whatever_a_poll_is_doing(
        monkeypatch):
    app = make_app(nodes=2)
    monkeypatch.setattr(app_module, "EXIT_GRACE_SECONDS", 0.01, raising=False)
    app.ends_process = True  # as the CLI runs it
    polling, release, ended = threading.Event(), threading.Event(), threading.Event()
    codes: list[int] = []

    def stuck_read(t: float):
        polling.set()
        release.wait(60)  # a frame of 100,000 ranks on a busy machine
        raise RuntimeError("nobody is watching")

    def force_exit(code: int) -> None:  # instead of ending the test's process
        codes.append(code)
        ended.set()

    monkeypatch.setattr(app.engine.source, "_read", stuck_read)
    monkeypatch.setattr(app, "force_exit", force_exit)

    async def quit_while_polling() -> None:
        await asyncio.to_thread(polling.wait, 30)
        app.exit(return_code=3)

    app.call_later(app.poll_forever)
    app.call_later(lambda: asyncio.ensure_future(quit_while_polling()))
    try:
        await app.run_async(headless=True)
        assert await asyncio.to_thread(ended.wait, 30)  # at once, unless nothing ends it
        assert codes == [3]
    finally:
        release.set()
