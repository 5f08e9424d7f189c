"""The selected cell keeps its own colour, under a mark, at every cell size: two characters
wide, one, and half a character (where two ranks share one character)."""

from __future__ import annotations

from ranktop.widgets import palette
from ranktop.widgets.heatmap import CURSOR_MARK, Heatmap
from textual import constants
from textual.app import App, ComposeResult

RANKS, GPUS = 512, 8


class OneMap(App[None]):
    def compose(self) -> ComposeResult:
        yield Heatmap(RANKS, GPUS, "high")


def character_at(heatmap: Heatmap, rank: int):
    """The (text, style) drawn where ``rank``'s cell is."""
    x, y, _ = heatmap.layout_grid.position(rank)
    at = 0
    for segment in heatmap.render_line(y + heatmap._y_offset):
        if at <= heatmap._x_offset + x < at + len(segment.text):
            return segment.text[heatmap._x_offset + x - at], segment.style
        at += len(segment.text)
    raise AssertionError(f"rank {rank} is not drawn")


async def test_the_cursor_keeps_its_cells_colour_at_every_cell_size(monkeypatch):
    monkeypatch.setattr(constants, "COLOR_SYSTEM", "256")
    app = OneMap()
    shapes = set()
    async with app.run_test(size=(90, 40)) as pilot:
        heatmap = app.query_one(Heatmap)
        values = [float(rank % 100) for rank in range(RANKS)]
        # wide enough for cells of two characters, then of one, then of half a one
        for size in ((90, 40), (100, 12), (40, 12)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            heatmap.update_values(values, 0, 100)
            grid = heatmap.layout_grid
            assert heatmap.mode == "rank", size
            shapes.add((grid.cell_width, grid.cells_per_row))
            for rank in (37, 38, 99):  # a top half, a bottom half, the hottest level
                heatmap.set_cursor(rank)
                await pilot.pause()
                text, style = character_at(heatmap, rank)
                level = heatmap.level_of(rank)
                assert text == CURSOR_MARK, (size, rank)
                assert style.bgcolor == palette.color_of(heatmap.colours, level), (size, rank)
    assert shapes == {(2, 1), (1, 1), (1, 2)}
