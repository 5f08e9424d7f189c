"""The console's header shows the job's goodput over the last hour, read off the screen."""

from __future__ import annotations

import re

from tests.tui.conftest import START, make_app, screen_text


async def test_the_header_shows_the_goodput_as_the_demo_runs():
    app = make_app(at=2.0, nodes=8)
    async with app.run_test(size=(160, 40)) as pilot:
        for at in range(2, 303, 2):
            app.clock.now = START + at
            await app.poll_once()
        await pilot.pause()
        header = next(line for line in screen_text(app).splitlines() if "ranks 64/64" in line)
        found = re.search(r"goodput (\d+) % \(5 min\)", header)
        assert found is not None, header
        assert abs(int(found[1]) - 62.5) <= 2  # the demo's loop: 62.5 % truly (a test of
        # the simulator's truth)


async def test_a_job_just_watched_shows_no_goodput_until_a_calm_minute():
    app = make_app(at=2.0, nodes=8)
    async with app.run_test(size=(160, 40)) as pilot:
        seen = []
        for at in range(2, 80, 2):
            app.clock.now = START + at
            await app.poll_once()
            await pilot.pause()
            header = next(line for line in screen_text(app).splitlines() if "ranks 64/64" in line)
            seen.append((at, "goodput" in header))
        assert not any(shown for at, shown in seen if at < 60)  # (by 300 s: the test above)
