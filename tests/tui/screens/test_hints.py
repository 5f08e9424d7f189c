"""A key the user rebound works, and shows wherever the screen names a key: the footer, the
help screen and every hint ("PAUSED: p to resume", "n / N to visit", "... closes this screen")."""

from __future__ import annotations

from dataclasses import replace

from ranktop.tui.screens.evidence import EvidenceScreen
from ranktop.tui.screens.help import HelpScreen
from ranktop.tui.screens.hints import any_of, sentence
from ranktop.tui.screens.rank import RankScreen
from textual.widgets import Input

from tests.tui.conftest import START, make_app, screen_text


def with_keys(keymap: dict[str, str], at: float = 20.0):
    app = make_app(at=at)
    app.settings = replace(app.settings, keymap=keymap)
    return app


async def started(app, pilot):
    await app.poll_once()
    await pilot.pause()


def header(app) -> str:
    return app.cluster.query_one("#header").render().plain


def footer(app) -> str:
    return screen_text(app).splitlines()[-1]


async def test_backspace_leaves_the_rank_screen_once_rank_back_is_bound_to_it():
    app = with_keys({"rank.back": "backspace"})
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("enter")
        assert isinstance(app.screen, RankScreen)
        assert "⌫ Back" in footer(app)
        await pilot.press("escape")  # the old key no longer goes back
        assert isinstance(app.screen, RankScreen)
        await pilot.press("slash", *"nccl", "backspace")  # a text field keeps its own keys
        search = app.screen.query_one("#log-search", Input)
        assert search.value == "ncc"
        await pilot.press("escape")  # and Esc closes it whatever the back key
        assert not search.display and isinstance(app.screen, RankScreen)
        await pilot.press("backspace")
        assert not isinstance(app.screen, RankScreen)


async def test_pause_on_space_shows_space_in_the_footer_and_in_the_paused_hint():
    app = with_keys({"app.pause": "space"})
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        assert "space Pause" in footer(app)
        assert "p Pause" not in footer(app)
        await pilot.press("p")
        assert "PAUSED" not in header(app)
        await pilot.press("space")
        assert "PAUSED: space to resume" in header(app)
        await pilot.press("space")
        assert "PAUSED" not in header(app)


async def test_the_default_pause_hint_names_p():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("p")
        assert "PAUSED: p to resume" in header(app)


async def test_the_help_screen_lists_the_rebound_keys_and_its_own_closing_keys():
    app = with_keys({"app.pause": "space", "help.close": "escape,x", "app.quit": "ctrl+x"})
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("question_mark")
        text = screen_text(app)
        pause_line = next(line for line in text.splitlines() if "Freeze the screen" in line)
        assert "space" in pause_line and " p " not in pause_line
        assert "Esc or x closes this screen; ^x quits ranktop from any screen." in text
        await pilot.press("x")
        assert not isinstance(app.screen, HelpScreen)


async def test_the_anomaly_list_and_the_map_titles_name_the_rebound_keys():
    app = with_keys({"anomaly.next": "v", "anomaly.previous": "V", "map.2": "w"}, at=100.0)
    async with app.run_test(size=(120, 40)) as pilot:
        for seconds in range(100, 136, 2):  # node 37's NVLink drops, then rank 128's ECC error
            app.clock.now = START + seconds
            await started(app, pilot)
        text = screen_text(app)
        assert "anomalies (2 critical, 1 major; 2 folded): v / V to visit" in text
        assert "w GPU temperature" in text and "1 SM activity" in text
        await pilot.press("v")  # the newest critical one: the ECC error
        assert app.cluster.cursor == 128
        await pilot.press("w")
        assert app.cluster.solo == 1


async def test_the_evidence_screen_names_its_rebound_closing_keys():
    from ranktop.tui.core.hang.triage import HangVerdict

    app = with_keys({"evidence.close": "escape,x"})
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        verdict = HangVerdict(reporting=[1, 2], silent=[3], behind=[3], last_completed={},
                              evidence={3: ["watchdog timeout"]}, summary="a stuck allreduce")
        app.push_screen(EvidenceScreen(verdict, app.cluster.rank_map))
        await pilot.pause()
        assert "Esc or x closes this screen." in screen_text(app)
        await pilot.press("x")
        assert not isinstance(app.screen, EvidenceScreen)


def test_hints_read_as_sentences_without_changing_a_one_letter_key():
    assert any_of(["esc", "?", "q"]) == "esc, ? or q"
    assert sentence("esc, ? or q closes this screen.") == "Esc, ? or q closes this screen."
    assert sentence("q or esc closes this screen.") == "q or esc closes this screen."
    assert sentence("? closes this screen.") == "? closes this screen."
