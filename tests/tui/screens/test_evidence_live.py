"""The hang evidence screen follows the analyses: its verdict's time and age, and the end
of the hang when the job resumes; it takes the log view's keys and has a footer."""

from __future__ import annotations

from ranktop.tui.screens.evidence import EvidenceScreen

from tests.tui.conftest import START, make_app, screen_text
from tests.tui.screens.test_rank_screen import poll


async def test_the_evidence_screen_changes_when_the_job_resumes(tmp_path):
    app = make_app(at=176.0, log_root=tmp_path)  # rank 455 died at 172 s, revives at 220 s
    async with app.run_test(size=(120, 40)) as pilot:
        for seconds in range(176, 200, 2):
            await poll(app, pilot, seconds)
        assert app.analysis.hang is not None
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EvidenceScreen)
        before = screen_text(app)
        assert "verdict of " in before and " s ago" in before
        assert "making progress" not in before
        assert "Close" in before.splitlines()[-1]  # a footer of keys
        for seconds in range(200, 270, 2):  # the rank comes back; the job steps again
            await poll(app, pilot, seconds)
            if app.analysis.hang is None:
                break
        assert app.analysis.hang is None and app.clock.now < START + 270
        after = screen_text(app)
        assert isinstance(app.screen, EvidenceScreen)
        assert "No hang to triage: the job is making progress." in after
        assert "The last verdict, no longer current:" in after


async def test_the_evidence_screen_takes_the_log_views_keys(tmp_path):
    app = make_app(at=176.0, log_root=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        for seconds in range(176, 196, 2):
            await poll(app, pilot, seconds)
        await pilot.press("e")
        await pilot.pause()
        box = app.screen.query_one("#evidence-box")
        assert box.max_scroll_y > 0  # longer than the screen
        await pilot.press("G")
        assert box.scroll_y == box.max_scroll_y
        await pilot.press("k")
        assert box.scroll_y == box.max_scroll_y - 1
        await pilot.press("g")
        assert box.scroll_y == 0
        await pilot.press("j")
        assert box.scroll_y == 1
        await pilot.press("slash", *"rank 10 (GPU-NODE", "enter")  # capitals: no match
        await pilot.pause()
        assert box.scroll_y == 1
        await pilot.press("slash", *"rank 10 (gpu-node", "enter")  # far down the evidence
        await pilot.pause()
        assert box.scroll_y > 1
        assert "rank 10 (gpu-node-001 GPU 2)" in screen_text(app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert "Find a word in the evidence" in screen_text(app)


async def test_n_and_N_step_through_the_evidence_searchs_matches(tmp_path):
    app = make_app(at=176.0, log_root=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        for seconds in range(176, 196, 2):
            await poll(app, pilot, seconds)
        await pilot.press("e")
        await pilot.pause()
        box = app.screen.query_one("#evidence-box")
        await pilot.press("n")  # no search yet: says so, moves nothing
        await pilot.pause()
        assert box.scroll_y == 0
        await pilot.press("slash", *"(gpu-node", "enter")  # a line a rank: many matches
        await pilot.pause()
        first = box.scroll_y
        await pilot.press("n")
        await pilot.pause()
        second = box.scroll_y
        assert second > first
        await pilot.press("N")
        await pilot.pause()
        assert box.scroll_y == first
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("G")  # on the cluster, the cursor to the last rank, g to the first
        assert app.cluster.cursor == len(app.cluster.rank_map) - 1
        await pilot.press("g")
        assert app.cluster.cursor == 0
