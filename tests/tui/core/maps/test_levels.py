"""A map's levels planned away from the UI thread: the same levels the widget would draw,
only the rows that changed, and refused once the map has moved on."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.core.maps import scale as palette
from ranktop.tui.core.maps.layout import fit
from ranktop.tui.core.maps.levels import MapView, cell_levels, plan

from tests.tui.properties import FEW

GPUS = 8


def view(n_ranks: int, ranks_per_cell: int = 1, levels: list[int] | None = None) -> MapView:
    cells = -(-n_ranks // ranks_per_cell)
    grid = fit(cells, GPUS, 2, 64, 40)
    ranks = levels if levels is not None else [palette.MISSING] * n_ranks
    return MapView("high", ranks, cell_levels(ranks, ranks_per_cell, 0, grid.visible_items),
                   grid, ranks_per_cell, 0)


def test_a_cell_of_whole_nodes_shows_its_worst_rank():
    ranks = [0] * 32
    ranks[9] = 5  # node 1
    ranks[30] = palette.MISSING  # node 3
    assert cell_levels(ranks, 8, 0, 4) == [0, 5, 0, palette.MISSING]
    assert cell_levels(ranks, 16, 0, 2) == [5, palette.MISSING]
    assert cell_levels(ranks, 1, 8, 4) == [0, 5, 0, 0]  # a zoomed window


def test_only_the_rows_of_changed_cells_are_named():
    before = view(512)
    first = plan(before, [50.0] * 512, 0.0, 100.0)
    assert len(first.rows) == before.grid.rows - (before.grid.bands - 1)  # every cell row
    settled = view(512, levels=first.rank_levels)
    values = [50.0] * 512
    values[37] = 99.0  # one rank of node 4, the fourth row of cells (two per text row)
    second = plan(settled, values, 0.0, 100.0)
    assert second.rows == {before.grid.position(37)[1]}
    assert second.rank_levels[37] == palette.LEVELS - 1


def test_stale_ranks_are_drawn_stale_and_missing_ones_missing():
    values = [50.0] * 16
    values[3] = float("nan")
    levels = plan(view(16), values, 0.0, 100.0, stale={2, 3})
    assert levels.rank_levels[2] == palette.STALE
    assert levels.rank_levels[3] == palette.MISSING


def test_levels_planned_against_an_older_map_are_refused():
    shown = view(512)
    levels = plan(shown, [50.0] * 512, 0.0, 100.0)
    assert levels.based_on(shown)
    relaid = MapView(shown.bad, shown.rank_levels, list(shown.cell_levels), shown.grid, 1, 0)
    assert not levels.based_on(relaid)  # the cells were worked out anew (a resize, a zoom)
    other_metric = MapView("low", shown.rank_levels, shown.cell_levels, shown.grid, 1, 0)
    assert not levels.based_on(other_metric)


def test_in_an_arrangement_a_cell_shows_the_ranks_placed_in_it():
    ranks = [0] * 16
    ranks[1] = 5  # placed at position 8 by the order below: the second column
    order = [r for start in (0, 1) for r in range(start, 16, 2)]  # evens, then odds
    assert cell_levels(ranks, 8, 0, 2, order) == [0, 5]
    assert cell_levels(ranks, 1, 8, 2, order) == [5, 0]  # a window from position 8
    assert cell_levels(ranks, 8, 0, 2) == [5, 0]  # rank order: rank 1 is in the first


ANY_FLOAT = st.one_of(st.floats(), st.sampled_from([1e308, -1e308, 3.5e38, 1e-320, math.inf,
                                                    -math.inf, math.nan]))


@FEW
@given(st.lists(ANY_FLOAT, min_size=1, max_size=20), ANY_FLOAT, ANY_FLOAT,
       st.sampled_from(["high", "low"]))
def test_any_values_on_any_scale_plan_levels_a_map_can_draw(values, low, high, bad):
    planned = plan(view(len(values)), values, low, high)
    assert all(0 <= level <= palette.MISSING for level in planned.rank_levels)
    for value, level in zip(values, planned.rank_levels, strict=True):
        assert (level == palette.MISSING) == math.isnan(value)
