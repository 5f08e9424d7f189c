"""The jobs list on the demo's fleet: a stalled job's row says its stall once, and the list
fits a 120-column terminal."""

from __future__ import annotations

from textual.widgets import DataTable

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
