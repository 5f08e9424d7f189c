"""The engine keeps each map's levels: a poll plans from the levels planned before, for the
maps as last laid out, and names the plan it worked from."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from ranktop.tui.core.maps.layout import GridLayout
from ranktop.tui.core.maps.levels import NO_BASE, MapShape
from ranktop.tui.core.maps.scale import MISSING
from ranktop.tui.engine.maps import MapBoard, MapGeometry

from tests.tui.engine.test_threaded import engine_at

N_RANKS = 32  # the demo engine's: 4 nodes of 8


def geometry(map_id: str = "map-0", metric: str = "sm_active", start: int = 0,
             ) -> MapGeometry:
    grid = GridLayout(N_RANKS, 8, 1, 4)
    return MapGeometry(map_id, metric, MapShape("low", N_RANKS, grid, 1, start))


def test_a_poll_plans_the_maps_given_and_the_next_from_the_levels_it_planned():
    engine = engine_at()
    first = asyncio.run(engine.poll([geometry()]))
    planned = first.levels["map-0"]
    assert planned.base == NO_BASE and planned.metric_id == "sm_active"
    assert len(planned.rank_levels) == N_RANKS and MISSING not in planned.rank_levels
    second = asyncio.run(engine.poll())  # None: the maps as they were
    assert second.levels["map-0"].base == planned.serial
    assert second.levels["map-0"].serial > planned.serial


def test_a_map_of_a_metric_without_values_gets_no_levels():
    engine = engine_at()
    snapshot = asyncio.run(engine.poll([geometry(metric="no_such_metric"), geometry("map-1")]))
    assert set(snapshot.levels) == {"map-1"}


def test_a_map_laid_out_anew_is_planned_from_no_base_and_keeps_its_ranks_levels():
    board = MapBoard()
    engine = engine_at()
    analysis = asyncio.run(engine.poll()).analysis
    board.reshape([geometry()])
    before = board.plan(analysis)["map-0"]
    board.reshape([geometry(start=8)])  # zoomed: other cells, the same ranks
    after = board.plan(analysis)["map-0"]
    assert after.base == NO_BASE
    assert after.rank_levels == before.rank_levels
    assert after.cell_levels == before.rank_levels[8:]


def test_another_metric_starts_from_no_levels_and_a_map_gone_is_forgotten():
    board = MapBoard()
    analysis = asyncio.run(engine_at().poll()).analysis
    board.reshape([geometry(), geometry("map-1")])
    board.plan(analysis)
    board.reshape([geometry(metric="temperature")])
    planned = board.plan(analysis)
    assert set(planned) == {"map-0"}
    assert planned["map-0"].base == NO_BASE and planned["map-0"].metric_id == "temperature"


def test_a_past_moment_plans_its_own_levels_and_the_live_poll_after_it_works_from_them():
    engine = engine_at(60.0)
    live = asyncio.run(engine.poll([geometry()]))
    past = asyncio.run(engine.at(live.analysis.frame.time - 30.0))
    assert past.levels["map-0"].base == live.levels["map-0"].serial
    after = asyncio.run(engine.poll())
    # A map still showing the live poll drew no plan this one was worked from: it repaints.
    assert after.levels["map-0"].base == past.levels["map-0"].serial
    assert after.levels["map-0"].base != live.levels["map-0"].serial


def test_equal_geometry_given_again_keeps_the_plan_it_was_worked_from():
    board = MapBoard()
    analysis = asyncio.run(engine_at().poll()).analysis
    board.reshape([geometry()])
    first = board.plan(analysis)["map-0"]
    board.reshape([replace(geometry())])  # equal, not the same object
    assert board.plan(analysis)["map-0"].base == first.serial
