"""The jobs list on the demo's fleet: a stalled job's row says its stall once; the list fits
the terminal, its free-text columns cut, so that no scrollbar shows under the rows; the
filter shows from `/` until Esc."""

from __future__ import annotations

from textual.widgets import DataTable, Input

from tests.tui.conftest import screen_text
from tests.tui.screens.test_snapshots import demo_fleet, first_refresh


async def test_a_stalled_jobs_row_says_its_stall_once_and_the_list_fits_120_columns():
    app = demo_fleet(at=60.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await first_refresh(pilot)
        [stalled] = [line for line in screen_text(app).splitlines() if "rlhf-stalled" in line]
        assert stalled.count("stalled ≥ 2 min") == 1
        table = app.screen.query_one(DataTable)
        assert not table.show_horizontal_scrollbar  # no bar under the rows


async def test_the_list_fits_the_terminal_its_shared_nodes_cut_where_it_is_narrow():
    app = demo_fleet(at=4000.0)  # the demo's job straggles: a wider Worst column
    async with app.run_test(size=(120, 40)) as pilot:
        await first_refresh(pilot)
        table = app.screen.query_one(DataTable)
        assert not table.show_horizontal_scrollbar
        assert table.virtual_size.width <= table.size.width
        assert "gpu-node-056: llama-70b-pretra…" in screen_text(app)
        await pilot.resize_terminal(150, 40)
        await pilot.pause()
        await pilot.pause()
        assert "gpu-node-056: llama-70b-pretrain" in screen_text(app)  # room again: whole
        assert not table.show_horizontal_scrollbar


async def test_the_filter_shows_from_slash_until_esc():
    app = demo_fleet(at=60.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await first_refresh(pilot)
        box = app.screen.query_one(Input)
        assert not box.display
        await pilot.press("slash")
        assert box.display and box.has_focus
        await pilot.press("escape")
        await pilot.pause()
        assert not box.display and app.screen.query_one(DataTable).has_focus
