"""Heatmap geometry: where each cell sits on screen, and which cell is under a point.

Cells are stacked in columns (a column is one node's GPUs, or several whole nodes when
aggregated); columns sit side by side with a blank column after every ``GAP_EVERY``; when
the columns do not fit the width they wrap into bands separated by a blank row. A cell is
``cell_width`` characters wide; with half-blocks one text row holds two cells of a column,
otherwise one. Bigger cells are used where the area allows them, and what width is left
is spread over the columns, a character more to some (``stretch``), so a map fills its
panel.

Pure arithmetic: no Textual, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from math import ceil

GAP_EVERY = 8


@dataclass(frozen=True)
class Arrangement:
    """Cells in another order than the ranks': ``order[i]`` is the rank at position i.
    Positions fill columns of ``column`` cells; ``unit`` neighbouring positions make one cell
    when the map is aggregated (a column is then ``column // unit`` cells); ``labels`` name
    each ``unit``-cell block of a column, top to bottom, in the left margin."""

    order: tuple[int, ...]
    column: int
    unit: int
    labels: tuple[str, ...] = ()


def columns_fitting(width: int, cell_width: int = 1) -> int:
    """How many columns fit in ``width`` characters, counting the separating gaps."""
    columns = max(0, width // cell_width)
    while columns and column_x(columns - 1, cell_width) + cell_width > width:
        columns -= 1
    return columns


def column_x(column: int, cell_width: int = 1) -> int:
    """The x offset of a column within its band."""
    return column * cell_width + column // GAP_EVERY


@dataclass(frozen=True)
class GridLayout:
    """A fitted arrangement of ``n_items`` cells."""

    n_items: int
    column_cells: int
    cells_per_row: int
    columns_per_band: int
    max_rows: int | None = None  # set when the grid was cut to fit: rows past it are not drawn
    cell_width: int = 1
    stretch: int = 0  # characters spread over a band's columns, at most one each

    @property
    def column_rows(self) -> int:
        return ceil(self.column_cells / self.cells_per_row)

    @property
    def n_columns(self) -> int:
        return ceil(self.n_items / self.column_cells)

    @property
    def bands(self) -> int:
        return ceil(self.n_columns / self.columns_per_band)

    @property
    def rows(self) -> int:
        full = self.bands * (self.column_rows + 1) - 1
        return full if self.max_rows is None else min(full, self.max_rows)

    @property
    def width(self) -> int:
        last = min(self.columns_per_band, self.n_columns) - 1
        return self._x(last) + self._width(last)

    def _x(self, band_column: int) -> int:
        """The x offset of a column within its band, stretched."""
        return (column_x(band_column, self.cell_width)
                + band_column * self.stretch // self.columns_per_band)

    def _width(self, band_column: int) -> int:
        """A column's characters: its cells' width, one more where the stretch falls."""
        extra = ((band_column + 1) * self.stretch // self.columns_per_band
                 - band_column * self.stretch // self.columns_per_band)
        return self.cell_width + extra

    @property
    def visible_items(self) -> int:
        """How many cells are drawn (fewer than ``n_items`` only when cut to fit)."""
        if self.max_rows is None:
            return self.n_items
        whole_bands = (self.max_rows + 1) // (self.column_rows + 1)
        return min(self.n_items, whole_bands * self.columns_per_band * self.column_cells)

    def position(self, item: int) -> tuple[int, int, int]:
        """(x, text row, half) of a cell; half 0 is the top of a half-block, 1 the bottom."""
        column, within = divmod(item, self.column_cells)
        band, band_column = divmod(column, self.columns_per_band)
        y = band * (self.column_rows + 1) + within // self.cells_per_row
        return self._x(band_column), y, within % self.cells_per_row

    def cells_in_row(self, y: int) -> list[tuple[int, ...]] | None:
        """The items drawn in text row ``y``: one tuple per x (empty for a gap), or None for a
        blank separator row. A tuple holds the items of that character, top first; an item
        past the end is -1."""
        band, row = divmod(y, self.column_rows + 1)
        if row == self.column_rows or band >= self.bands:
            return None
        cells: list[tuple[int, ...]] = []
        first_column = band * self.columns_per_band
        for band_column in range(min(self.columns_per_band, self.n_columns - first_column)):
            if band_column and band_column % GAP_EVERY == 0:
                cells.append(())
            base = (first_column + band_column) * self.column_cells + row * self.cells_per_row
            cell = tuple(
                self._item(base + k, row * self.cells_per_row + k)
                for k in range(self.cells_per_row)
            )
            cells.extend([cell] * self._width(band_column))
        return cells

    def _item(self, item: int, within: int) -> int:
        return item if within < self.column_cells and item < self.n_items else -1

    def item_at(self, x: int, y: int, half: int = 0) -> int | None:
        """The cell at character (x, y), or None over a gap or past the end."""
        cells = self.cells_in_row(y) if 0 <= y < self.rows else None
        if cells is None or not 0 <= x < len(cells) or not cells[x]:
            return None
        item = cells[x][min(half, len(cells[x]) - 1)]
        return None if item < 0 else item

    def move(self, item: int, dx: int, dy: int) -> int:
        """The cell reached from ``item`` by a cursor step; stays put at the edges.

        Vertical steps walk down a column and on into the same column of the next band;
        horizontal steps keep the position within the column.
        """
        column, within = divmod(item, self.column_cells)
        if dy:
            within += dy
            band = column // self.columns_per_band
            if within >= self.column_cells and band + 1 < self.bands:
                column, within = column + self.columns_per_band, 0
            elif within < 0 and band > 0:
                column, within = column - self.columns_per_band, self.column_cells - 1
            within = max(0, min(within, self.column_cells - 1))
        if dx:
            band_start = column - column % self.columns_per_band
            column = max(band_start, min(column + dx, band_start + self.columns_per_band - 1))
        target = column * self.column_cells + within
        return item if target >= self.n_items else target


def fit(n_items: int, column_cells: int, cells_per_row: int, width: int,
        height: int, cell_width: int = 1) -> GridLayout | None:
    """The layout of ``n_items`` cells in columns of ``column_cells``, or None if it cannot fit."""
    max_columns = columns_fitting(width, cell_width)
    if n_items < 1 or max_columns < 1 or height < 1:
        return None
    n_columns = ceil(n_items / column_cells)
    bands = ceil(n_columns / max_columns)
    per_band = ceil(n_columns / bands)
    rounded = ceil(per_band / GAP_EVERY) * GAP_EVERY
    if rounded <= max_columns and ceil(n_columns / rounded) == bands:
        per_band = rounded
    layout = GridLayout(n_items, column_cells, cells_per_row, per_band, cell_width=cell_width)
    return layout if layout.rows <= height else None


def fit_nodes(n_nodes: int, shapes: Sequence[tuple[int, int]], width: int,
              height: int) -> GridLayout | None:
    """An aggregated layout, one cell per node: the biggest cells that fit.

    Columns of 8 nodes read best, so among layouts with cells of one size they come first;
    ``shapes`` are ``(cell_width, cells_per_row)``, biggest first.
    """
    tallest = max(1, height * 2)
    best: GridLayout | None = None
    for column_cells in (8, *range(10, tallest + 1, 2), *range(6, 0, -2)):
        for cell_width, cells_per_row in shapes:
            layout = fit(n_nodes, column_cells, cells_per_row, width, height, cell_width)
            if layout is not None and (best is None or cell_area(layout) > cell_area(best)):
                best = layout
    return best


def cell_area(layout: GridLayout) -> float:
    """A cell's size in character rows: two cells a row are half one."""
    return layout.cell_width / layout.cells_per_row


def widened(layout: GridLayout, width: int) -> GridLayout:
    """``layout`` with the width it leaves of ``width`` spread over its columns, at most a
    character more to each, and only to cells two or more wide (a cell one wide would look
    twice as wide as its neighbours)."""
    if layout.cell_width < 2:
        return layout
    stretch = min(layout.columns_per_band, max(0, width - layout.width))
    while stretch and replace(layout, stretch=stretch).width > width:
        stretch -= 1
    return replace(layout, stretch=stretch)


def cut_to_fit(n_items: int, cells_per_row: int, width: int, height: int) -> GridLayout | None:
    """A layout that shows as many cells as the area holds, for areas too small for all."""
    max_columns = columns_fitting(width)
    if n_items < 1 or max_columns < 1 or height < 1:
        return None
    column_cells = height * cells_per_row
    return GridLayout(n_items, column_cells, cells_per_row, max_columns, max_rows=height)
