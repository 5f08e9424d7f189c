"""Heatmap geometry: cell <-> rank, node columns and boundaries, cursor at the edges, fitting."""

from __future__ import annotations

import pytest
from ranktop.tui.core.maps.layout import (
    column_x,
    columns_fitting,
    cut_to_fit,
    fit,
    fit_nodes,
    widened,
)


def test_columns_fitting_counts_the_gap_after_every_eight_columns():
    assert columns_fitting(8) == 8
    assert columns_fitting(9) == 8  # a ninth column would need a gap first
    assert columns_fitting(10) == 9
    assert columns_fitting(35) == 32
    assert columns_fitting(0) == 0
    for width in range(1, 200):
        n = columns_fitting(width)
        assert column_x(n - 1) + 1 <= width < column_x(n) + 1


def test_512_ranks_in_a_quarter_of_a_120x40_screen_are_two_bands_of_32_nodes():
    grid = fit(512, 8, 2, width=58, height=14)
    assert grid is not None
    assert grid.columns_per_band == 32
    assert grid.bands == 2
    assert grid.rows == 9  # 4 rows of half-blocks per band, one blank row between
    assert grid.width == 35  # 32 columns and 3 gaps


def test_every_rank_has_its_own_cell_and_maps_back():
    grid = fit(512, 8, 2, width=58, height=14)
    seen = set()
    for rank in range(512):
        x, y, half = grid.position(rank)
        assert grid.item_at(x, y, half) == rank
        seen.add((x, y, half))
    assert len(seen) == 512


def test_a_node_fills_one_column_and_nodes_sit_side_by_side():
    grid = fit(512, 8, 2, width=58, height=14)
    node_5 = {grid.position(rank)[0] for rank in range(5 * 8, 6 * 8)}
    assert node_5 == {5}
    assert [grid.position(r)[1:] for r in range(40, 48)] == [
        (0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)
    ]
    # node 8 starts after a blank gap column: node boundaries in groups of eight
    assert grid.position(8 * 8)[0] == 9
    assert grid.item_at(8, 0) is None
    # the second band starts below a blank row
    assert grid.position(32 * 8)[1] == 5
    assert grid.cells_in_row(4) is None


def test_cells_in_row_lists_top_and_bottom_items_and_gaps():
    grid = fit(24, 4, 2, width=80, height=10)  # 6 nodes of 4 GPUs
    row0 = grid.cells_in_row(0)
    assert row0[:3] == [(0, 1), (4, 5), (8, 9)]
    assert len(row0) == 6


def test_an_odd_number_of_gpus_leaves_the_last_half_empty():
    grid = fit(6, 3, 2, width=20, height=4)
    assert grid.cells_in_row(1) == [(2, -1), (5, -1)]


def test_cursor_moves_down_a_node_then_into_the_next_band():
    grid = fit(512, 8, 2, width=58, height=14)
    assert grid.move(0, 0, 1) == 1
    assert grid.move(7, 0, 1) == 32 * 8  # bottom of node 0 -> top of node 32 (band 2)
    assert grid.move(32 * 8, 0, -1) == 7
    assert grid.move(0, 0, -1) == 0  # top-left corner stays
    assert grid.move(511, 0, 1) == 511  # bottom-right corner stays


def test_cursor_moves_across_nodes_keeping_the_gpu_and_stops_at_the_band_edge():
    grid = fit(512, 8, 2, width=58, height=14)
    assert grid.move(3, 1, 0) == 8 + 3  # GPU 3 of node 0 -> GPU 3 of node 1
    assert grid.move(31 * 8 + 3, 1, 0) == 31 * 8 + 3  # right edge of band 1
    assert grid.move(3, -1, 0) == 3  # left edge
    assert grid.move(32 * 8, -1, 0) == 32 * 8


def test_cursor_never_lands_past_the_last_rank():
    grid = fit(20, 8, 2, width=40, height=10)  # last node has 4 GPUs
    assert grid.move(11, 1, 0) == 19  # GPU 3 of node 1 -> GPU 3 of node 2, the last rank
    assert grid.move(13, 1, 0) == 13  # node 2 has no GPU 5: stay
    assert grid.move(19, 0, 1) == 19
    assert all(grid.move(r, dx, dy) < 20 for r in range(20) for dx, dy in
               ((1, 0), (-1, 0), (0, 1), (0, -1)))


def test_rank_layout_that_cannot_fit_returns_none():
    assert fit(512, 8, 2, width=38, height=7) is None
    assert fit(512, 8, 2, width=0, height=7) is None


def test_nodes_aggregate_when_ranks_do_not_fit():
    grid = fit_nodes(64, [(1, 2)], width=38, height=7)
    assert grid is not None
    assert grid.n_items == 64
    assert grid.rows <= 7 and grid.width <= 38
    assert {grid.item_at(*grid.position(n)) for n in range(64)} == set(range(64))


def test_16384_ranks_aggregate_to_2048_nodes_on_a_full_screen():
    assert fit(16384, 8, 2, width=118, height=30) is None
    grid = fit_nodes(2048, [(1, 2)], width=118, height=30)
    assert grid is not None and grid.visible_items == 2048


def test_a_tiny_area_is_cut_and_says_how_many_cells_it_shows():
    grid = cut_to_fit(2048, 2, width=10, height=2)
    assert grid is not None
    assert grid.rows == 2
    assert 0 < grid.visible_items < 2048
    for item in range(grid.visible_items):
        x, y, _ = grid.position(item)
        assert x < 10 and y < 2


@pytest.mark.parametrize("width,height", [(1, 1), (3, 1), (5, 2), (40, 12), (200, 60)])
def test_layouts_stay_inside_their_area(width, height):
    for grid in (fit(512, 8, 2, width, height), fit_nodes(64, [(2, 1), (1, 2)], width, height),
                 cut_to_fit(64, 1, width, height)):
        if grid is None:
            continue
        assert grid.width <= width
        assert grid.rows <= height
        for y in range(grid.rows):
            cells = grid.cells_in_row(y)
            assert cells is None or len(cells) <= width


def test_wide_cells_take_two_characters_each():
    grid = fit(512, 8, 1, width=118, height=33, cell_width=2)
    assert grid is not None
    assert grid.position(8) == (2, 0, 0)
    assert grid.position(8 * 8) == (17, 0, 0)  # after eight nodes, a gap
    assert grid.item_at(2, 0) == grid.item_at(3, 0) == 8
    assert grid.width == 32 * 2 + 3


def test_node_view_prefers_columns_of_eight_nodes_among_cells_of_one_size():
    grid = fit_nodes(64, [(2, 1), (1, 1), (1, 2)], width=38, height=8)
    assert grid is not None and grid.column_cells == 8 and grid.cell_width == 2


def test_node_view_takes_bigger_cells_in_shorter_columns_where_eight_would_be_tiny():
    # a map of an 80x24 terminal: 38x4; columns of 8 nodes would be 8 half-blocks wide
    grid = fit_nodes(64, [(2, 1), (1, 1), (1, 2)], width=38, height=4)
    assert grid is not None and (grid.column_cells, grid.cell_width) == (4, 2)
    assert grid.width >= 32 and grid.rows == 4


@pytest.mark.parametrize("n,column,per_row,width,height", [
    (64, 4, 1, 38, 4),  # 80x24: a cell per node
    (512, 8, 1, 98, 19),  # 200x60: a cell per rank
])
def test_a_widened_layout_fills_its_panel_and_keeps_every_cell(n, column, per_row, width,
                                                               height):
    grid = widened(fit(n, column, per_row, width, height, cell_width=2), width)
    assert width - 2 <= grid.width <= width
    drawn = {grid.item_at(x, y) for y in range(grid.rows) for x in range(width)}
    assert drawn - {None} == set(range(n))
    assert all(grid.item_at(*grid.position(item)) == item for item in range(n))
    widths = {sum(1 for cell in grid.cells_in_row(0) if cell and cell[0] == item)
              for item in range(0, min(n, grid.columns_per_band * column), column)}
    assert widths <= {2, 3}  # a character more to some columns, no more
