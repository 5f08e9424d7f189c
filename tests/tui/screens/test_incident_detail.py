"""The detail key: every word of the selected incident, wrapped, at 80x24."""

from __future__ import annotations

from ranktop.tui.screens.incident_detail import IncidentScreen

from tests.tui.conftest import make_app, screen_text
from tests.tui.screens.test_incident_rows import watched


def box_words(app) -> str:
    """The words inside the detail box, its wrapped lines joined again."""
    lines = [line.strip(" │╭╮╰╯─") for line in screen_text(app).splitlines()]
    return " ".join(" ".join(lines).split())


def words(text: str) -> str:
    return " ".join(text.split())


async def test_the_detail_key_shows_the_whole_incident_wrapped_at_80x24(tmp_path):
    app = make_app(at=174.0, log_root=tmp_path)  # the demo's dead rank and its hang
    async with app.run_test(size=(80, 24)) as pilot:
        await watched(app, pilot, 20)
        for _ in range(len(app.analysis.incidents)):  # to the dead rank's incident
            await pilot.press("n")
            await pilot.pause()
            if app.cluster.cursor == 455:
                break
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, IncidentScreen)
        (incident,) = [i for i in app.analysis.incidents if i.rank == 455]
        hang = next(a for a in incident.explained if a.kind == "hang")
        assert words(f"what {incident.root.summary}") in box_words(app)  # the root, whole
        first = incident.explained[0]
        assert first.name in box_words(app).split("Explained by it")[1]
        await pilot.press("G")  # to the end: the last anomaly folded, and why, whole
        await pilot.pause()
        last = incident.explained[-1]
        assert words(last.summary) in box_words(app)
        assert "why folded hang on rank 455" in box_words(app)
        await pilot.press("g")
        await pilot.pause()
        assert words(incident.headline) in box_words(app)
        for _ in range(40):  # line by line to the hang's text, every word of it on screen
            if words(hang.summary) in box_words(app):
                break
            await pilot.press("j")
            await pilot.pause()
        assert words(hang.summary) in box_words(app)
        await pilot.press("escape")
        assert not isinstance(app.screen, IncidentScreen)


async def test_the_detail_key_is_in_the_footer_and_the_help():
    app = make_app(at=20.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await watched(app, pilot, 2)
        assert "i Detail" in screen_text(app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert "The selected anomaly's whole text" in screen_text(app)


async def test_on_the_rank_screen_the_detail_key_shows_its_incident_whole_at_80x24(tmp_path):
    app = make_app(at=174.0, log_root=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await watched(app, pilot, 20)
        await pilot.press("slash", *"455", "enter", "enter")
        await pilot.pause()
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, IncidentScreen)
        (incident,) = [i for i in app.analysis.incidents if i.rank == 455]
        assert words(incident.headline) in box_words(app)
        await pilot.press("escape")
        await pilot.press("]")  # rank 456: nothing wrong there
        await pilot.press("i")
        await pilot.pause()
        assert not isinstance(app.screen, IncidentScreen)
