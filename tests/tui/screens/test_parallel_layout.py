"""The maps laid out by the job's parallelism: pipeline stages as rows, data-parallel replicas
as columns; `t` switches between that and the node layout."""

from __future__ import annotations

from dataclasses import replace

from ranktop.tui.app.console import RanktopApp
from ranktop.tui.core.config_values import LayoutSettings
from ranktop.tui.core.parallelism import fit_world, parse
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source
from ranktop.widgets.panel import MetricPanel

from tests.tui.conftest import START, FakeClock, screen_text

PARALLELISM = parse("tp=8,pp=4")  # dp from the demo's 512 ranks: 16


def app_with(parallelism) -> RanktopApp:
    clock = FakeClock(START + 60)
    source = demo_source(DemoSettings(64, 8, seed=7), clock, started=START)
    settings = replace(load_settings(), layout=LayoutSettings(parallelism, "node"))
    return RanktopApp(settings, source, clock=clock, poll=False)


def heatmap(app, index=0):
    return app.screen.query_one(f"#map-{index}", MetricPanel).heatmap


def rows_and_columns(map_) -> tuple[dict[int, set], dict[int, set]]:
    """Where each stage's and each replica's cells are drawn: (text row, half) and x."""
    p = fit_world(PARALLELISM, 512)
    rows: dict[int, set] = {}
    columns: dict[int, set] = {}
    for rank in range(512):
        x, y, half = map_.layout_grid.position(map_._item_of(rank))
        rows.setdefault(p.stage(rank), set()).add((y, half))
        columns.setdefault(p.replica(rank), set()).add(x)
    return rows, columns


async def test_t_lays_the_maps_out_with_stages_as_rows_and_replicas_as_columns():
    app = app_with(PARALLELISM)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        assert heatmap(app).arrangement is None  # the node layout stays the default
        await pilot.press("t")
        await pilot.pause()
        for solo in (None, "1"):  # four maps (a cell per stage of a replica), then one
            if solo:
                await pilot.press(solo)
                await pilot.pause()
            map_ = heatmap(app)
            rows, columns = rows_and_columns(map_)
            # each stage on rows of its own, top to bottom; each replica a column of its own
            assert all(max(rows[s]) < min(rows[s + 1]) for s in range(3)), solo
            assert all(len(xs) == 1 for xs in columns.values()), solo
            assert len({x for xs in columns.values() for x in xs}) == 16, solo
            text = screen_text(app)
            assert "stages × replicas" in text
            assert all(f"pp{s} " in text for s in range(4)), solo
        assert map_.mode == "rank"  # full size: every rank its own cell, tp=8 inside a stage
        await pilot.press("t")
        await pilot.pause()
        assert heatmap(app).arrangement is None and "pp0 " not in screen_text(app)


async def test_t_without_a_parallelism_that_fits_says_why_and_stays_by_node():
    for parallelism, says in [(None, "No parallelism given"),
                              (parse("tp=8,pp=4,dp=8"), "tp=8,pp=4,dp=8 is 256 ranks but the "
                                                        "job has 512")]:
        app = app_with(parallelism)
        said = []
        async with app.run_test(size=(120, 40)) as pilot:
            app.notify = lambda message, said=said, **_: said.append(message)
            await pilot.press("t")
            await pilot.pause()
            assert heatmap(app).arrangement is None
        assert any(says in message for message in said), said
