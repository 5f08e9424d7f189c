"""A past moment marked in a log: the lines as they stood then above the mark, shown in the
middle of the view, what came after below it, and G back to the end."""

from __future__ import annotations

from ranktop.widgets.log_view import MAX_LINES, LogView
from textual.app import App, ComposeResult

MARK = "── 03:12:40: the moment shown; G for the end ──"


class OneLog(App[None]):
    def compose(self) -> ComposeResult:
        yield LogView()


def visible(app: OneLog) -> list[str]:
    log = app.query_one(LogView)
    return [log.render_line(y).text.rstrip() for y in range(log.size.height)]


async def test_the_mark_sits_before_the_first_line_after_the_moment_in_the_middle():
    app = OneLog()
    async with app.run_test(size=(60, 11)) as pilot:
        log = app.query_one(LogView)
        log.add(("", f"line {n}") for n in range(100))
        await pilot.pause()
        assert visible(app)[-1] == "line 99"  # following the end
        log.mark_moment(40, MARK)
        await pilot.pause()
        rows = visible(app)
        assert rows[5] == MARK and rows[4] == "line 39" and rows[6] == "line 40"
        assert not log.following
        log.add([("", "line 100")])  # what comes while the moment is shown stays below
        await pilot.pause()
        assert visible(app)[5] == MARK
        await pilot.press("G")
        await pilot.pause()
        assert visible(app)[-1] == "line 100" and log.following


async def test_the_mark_stays_among_warnings_only_and_never_pushes_out_a_line_it_marks():
    app = OneLog()
    async with app.run_test(size=(60, 11)) as pilot:
        log = app.query_one(LogView)
        log.add(("error" if n % 10 == 0 else "", f"line {n}") for n in range(MAX_LINES))
        log.mark_moment(MAX_LINES - 3, MARK)
        await pilot.pause()
        texts = [text for _, text in log.lines]
        assert len(texts) == MAX_LINES and texts.index(MARK) == MAX_LINES - 4
        assert texts[MAX_LINES - 3] == f"line {MAX_LINES - 3}"
        await pilot.press("w")
        await pilot.pause()
        assert MARK in visible(app)
