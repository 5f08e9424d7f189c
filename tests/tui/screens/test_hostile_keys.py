"""Keys and typed text that once crashed the console: each is answered, and it keeps running."""

from __future__ import annotations

from ranktop.tui.screens.jump import JumpScreen
from ranktop.tui.screens.rank import RankScreen

from tests.tui.conftest import make_app, screen_text

MARKUP = ["[/]", "[/x]", "[@click=app.quit]go[/]", "[link=http://x]y[/link]", "[b"]


async def test_markup_typed_in_the_jump_prompt_is_only_text():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        for typed in MARKUP:
            await pilot.press("slash")
            assert isinstance(app.screen, JumpScreen)
            await pilot.press(*typed, "enter")
            await pilot.pause()
            assert f"No rank, host or node matches {typed!r}" in screen_text(app)
            await pilot.press("escape")
        assert app.is_running and app.return_code is None


async def test_a_superscript_digit_is_no_rank_and_no_crash():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.press("²", "slash", "²", "enter")
        await pilot.pause()
        assert "No rank, host or node matches '²'" in screen_text(app)
        assert app.is_running and app.return_code is None


async def test_markup_searched_in_the_rank_log_is_only_text(tmp_path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RankScreen)
        for typed in MARKUP:
            await pilot.press("slash", *typed, "enter")
            await pilot.pause()
            assert f"/{typed}: " in screen_text(app)  # the search, as typed, in the title
        assert app.is_running and app.return_code is None
