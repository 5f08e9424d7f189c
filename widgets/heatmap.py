"""One metric of every rank as a grid of half-block cells, drawn through the Line API.

A cell keeps its place across refreshes (rank order, a node's GPUs in one column). When
the ranks do not fit, each cell becomes a node (or 2, 4, ... nodes) showing its worst GPU,
and ``zoom`` shows the nodes around one at full resolution. Only the text rows whose
levels changed are repainted; equal neighbours are merged into one segment to keep the
bytes per refresh low.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region
from textual.message import Message
from textual.reactive import var
from textual.strip import Strip
from textual.widget import Widget

from ..tui.core.maps import levels as map_levels
from ..tui.core.maps.layout import (
    Arrangement,
    GridLayout,
    cut_to_fit,
    fit,
    fit_nodes,
    widened,
)
from . import palette
from .ascii_only import ascii_only

HALF_BLOCK = "▀"
PLAIN = Style()
CURSOR_MARK = "◆"
ANOMALY_MARK = "▲"


class Heatmap(Widget):
    """A per-rank heatmap of one metric."""

    DEFAULT_CSS = """
    Heatmap { height: 1fr; width: 1fr; }
    """
    # The cells are not styled here but by widgets/palette.py's table (why: its docstring).
    COMPONENT_CLASSES = {
        "heatmap--label",  # the node number left of a band
        "heatmap--anomaly",  # the ▲ under a rank with an active anomaly
    }

    cursor_rank = var(0, init=False)
    """The selected rank; its watcher repaints only the rows of the old and new cells."""

    class Relaid(Message):
        """The map was laid out anew (resize, zoom): ``mode`` may have changed."""

        def __init__(self, mode: str) -> None:
            super().__init__()
            self.mode = mode

    class RankClicked(Message):
        """The user clicked a cell."""

        def __init__(self, rank: int) -> None:
            super().__init__()
            self.rank = rank

    def __init__(self, n_ranks: int, gpus_per_node: int, bad: str, *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.n_ranks = n_ranks
        self.gpus_per_node = gpus_per_node
        self.bad = bad
        self.zoom_node: int | None = None
        self.nodes_per_cell = 1  # when aggregated: whole nodes behind each cell
        self.mode = "rank"
        self.layout_grid: GridLayout | None = None
        self.window_start = 0  # first rank shown when zoomed
        self.colours = palette.SIXTEEN  # the colour system's table, known once mounted
        self._rank_levels = [palette.MISSING] * n_ranks
        self._item_levels: list[int] = []
        self._serial = map_levels.NO_BASE  # the engine's plan drawn last (PlannedMap.serial)
        self._rows: dict[int, Strip] = {}
        self._x_offset = 0
        self._y_offset = 0
        self.marked: frozenset[int] = frozenset()  # ranks with an active anomaly
        self.arrangement: Arrangement | None = None  # None: rank order, a node per column
        self._position: list[int] = []  # the arrangement's position of each rank
        self._marks: dict[int, set[int]] = {}  # marker row -> x of each marked column

    # -- what the app calls ------------------------------------------------------------

    def update_values(self, values: Sequence[float], low: float, high: float,
                      stale: Collection[int] = (), unknown: Collection[int] = ()) -> None:
        """Show a new frame of values (NaN for no data) on a ``low``..``high`` scale;
        ``stale`` ranks are drawn as stale whatever their value, ``unknown`` ones (not
        answered) too."""
        self.show_levels(map_levels.plan(self.view(), values, low, high, stale, unknown))
        self._serial = map_levels.NO_BASE  # levels of its own: the engine's next plan is news

    def view(self) -> map_levels.MapView:
        """What the map shows now, to plan a frame's levels against (on any thread)."""
        return map_levels.MapView(self.bad, self._rank_levels, self._item_levels,
                                  self.layout_grid, self._cell_ranks(), self.window_start,
                                  self._order())

    def shape(self) -> map_levels.MapShape:
        """The map's cells as plain values, for the engine to plan levels for."""
        return map_levels.MapShape(self.bad, self.n_ranks, self.layout_grid, self._cell_ranks(),
                                   self.window_start, self._order())

    def show_planned(self, planned: map_levels.PlannedMap) -> bool:
        """Draw levels the engine planned; False (nothing drawn) if they are for cells the
        map no longer has. Only the rows they name are repainted if the map drew the plan
        they were worked out from; else all."""
        if planned.shape != self.shape():
            return False
        self._rank_levels = list(planned.rank_levels)
        self._item_levels = list(planned.cell_levels)
        drew_base = planned.base != map_levels.NO_BASE and planned.base == self._serial
        self._serial = planned.serial
        if drew_base:
            self._repaint_rows(planned.rows)
        else:
            self._rows.clear()
            self.refresh()
        return True

    def show_levels(self, levels: map_levels.MapLevels) -> bool:
        """Draw levels planned against this map; False (nothing drawn) if the map has
        changed since: plan them again."""
        if not levels.based_on(self.view()):
            return False
        self._rank_levels = levels.rank_levels
        self._item_levels = levels.cell_levels
        self._repaint_rows(levels.rows)
        return True

    def set_marks(self, ranks: frozenset[int]) -> None:
        """Mark the columns of ``ranks`` (an active anomaly) with a ▲ in the row beneath."""
        if ranks != self.marked:
            self.marked = ranks
            self._place_marks()

    def _place_marks(self) -> None:
        grid = self.layout_grid
        old_rows = set(self._marks)
        self._marks = {}
        if grid is not None:
            for rank in self.marked:
                item = self._item_of(rank)
                if 0 <= item < self.item_count():
                    x, y, _ = grid.position(item)
                    row = (y // (grid.column_rows + 1)) * (grid.column_rows + 1)
                    self._marks.setdefault(row + grid.column_rows, set()).add(x)
        for y in old_rows | set(self._marks):
            self._rows.pop(y, None)
            self.refresh(Region(0, y + self._y_offset, self.size.width, 1))

    def arrange(self, arrangement: Arrangement | None) -> None:
        """Lay the cells out in ``arrangement`` (None: rank order, by node) from now on."""
        self.arrangement = arrangement
        self._position = [0] * self.n_ranks
        for position, rank in enumerate(arrangement.order if arrangement else ()):
            self._position[rank] = position
        self.zoom_node = None
        if self.is_mounted:
            self._relayout()

    def column_of(self, rank: int) -> int:
        """The column ``rank`` lies in, at full resolution (its node, by default)."""
        return self._pos(rank) // self._column

    def forget_levels(self) -> None:
        """Drop the remembered levels (the map now shows another metric)."""
        self._rank_levels = [palette.MISSING] * self.n_ranks
        self._serial = map_levels.NO_BASE

    def set_cursor(self, rank: int) -> None:
        """Select ``rank``; zoomed maps follow it into its node's window."""
        self.cursor_rank = rank

    def watch_cursor_rank(self, old: int, rank: int) -> None:
        if self.mode == "zoom" and not self._in_window(rank):
            self.zoom(self._node_of(rank))
            return
        self._repaint_items([self._item_of(old), self._item_of(rank)])

    def zoom(self, node: int | None) -> None:
        """Show the nodes around ``node`` rank by rank, or (None) the whole job again."""
        self.zoom_node = node
        self._relayout()

    def level_of(self, rank: int) -> int:
        """The level drawn for ``rank``'s cell (its node's, when aggregated); EMPTY if hidden."""
        item = self._item_of(rank)
        return self._item_levels[item] if 0 <= item < len(self._item_levels) else palette.EMPTY

    def item_count(self) -> int:
        return 0 if self.layout_grid is None else self.layout_grid.visible_items

    def move_cursor(self, dx: int, dy: int) -> int:
        """The rank a cursor step from the current one reaches in this map's layout."""
        if self.layout_grid is None:
            return self.cursor_rank
        item = self._item_of(self.cursor_rank)
        target = self.layout_grid.move(max(item, 0), dx, dy)
        if self.mode in ("node", "cut"):
            within = self._pos(self.cursor_rank) % self._ranks_per_cell
            return self._rank_at(min(target * self._ranks_per_cell + within, self.n_ranks - 1))
        return self._rank_at(min(self.window_start + target, self.n_ranks - 1))

    # -- layout ------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.colours = palette.colours_for(self.app.console.color_system)

    def on_resize(self, event: events.Resize) -> None:
        self._relayout()

    @property
    def glyphs(self) -> bool:
        """Whether levels are drawn as glyphs: no colour (NO_COLOR, or a terminal without)."""
        return palette.without_colour(self.app)

    def _shapes(self) -> list[tuple[int, int]]:
        """Cell shapes to try, biggest first: (characters wide, cells per text row); two cells
        a row only as half-blocks, which need colour and more than ASCII."""
        if self.glyphs or ascii_only(self.app):
            return [(2, 1), (1, 1)]
        return [(2, 1), (1, 1), (1, 2)]

    def _relayout(self) -> None:
        width, height = self.size
        g = self._unit
        n_nodes = -(-self.n_ranks // g)
        self.window_start = 0
        grid = None
        if self.zoom_node is None:
            self.mode = "rank"
            grid = self._fit_ranks(width, height)
        else:
            self.mode = "zoom"
            grid = self._zoom_window(width, height)
        self.nodes_per_cell = 1
        cells = n_nodes
        while grid is None and self.nodes_per_cell <= n_nodes:
            self.mode = "node"
            cells = -(-n_nodes // self.nodes_per_cell)
            grid = self._fit_groups(cells, width, height)
            if grid is None:
                self.nodes_per_cell *= 2
        if grid is None:
            self.mode = "cut"
            grid = cut_to_fit(cells, self._shapes()[-1][1], width, height)
        margin = self._margin_width()  # the labels' room, left of the cells
        self.layout_grid = grid = widened(grid, width - margin) if grid is not None else None
        spare = max(0, width - grid.width) if grid else 0
        self._x_offset = max(min(margin, spare), spare // 2)
        self._y_offset = max(0, (height - grid.rows) // 2) if grid else 0
        self._item_levels = map_levels.cell_levels(self._rank_levels, self._cell_ranks(),
                                                   self.window_start, self.item_count(),
                                                   self._order())
        self._serial = map_levels.NO_BASE
        self._rows.clear()
        self._place_marks()
        self.refresh()
        self.post_message(self.Relaid(self.mode))

    def _fit_ranks(self, width: int, height: int) -> GridLayout | None:
        """Every rank in its own cell, in the biggest cell shape that fits."""
        for cell_width, per_row in self._shapes():
            grid = fit(self.n_ranks, self._column, per_row, width, height, cell_width)
            if grid is not None:
                return grid
        return None

    def _fit_groups(self, cells: int, width: int, height: int) -> GridLayout | None:
        """Aggregated cells: whole nodes, or in an arrangement one column per column of it
        (one cell per ``unit``, e.g. per stage of a replica) where that fits."""
        arranged = self.arrangement
        if arranged is not None and self.nodes_per_cell == 1:
            for cell_width, per_row in self._shapes():
                grid = fit(cells, arranged.column // arranged.unit, per_row, width, height,
                           cell_width)
                if grid is not None:
                    return grid
        return fit_nodes(cells, self._shapes(), width, height)

    def _zoom_window(self, width: int, height: int) -> GridLayout | None:
        """The most whole nodes around ``zoom_node`` that fit at full resolution."""
        g = self._column
        cell_width, per_row = self._shapes()[-1]
        nodes = 0
        while nodes * g < self.n_ranks and fit((nodes + 1) * g, g, per_row, width, height):
            nodes += 1
        if not nodes:
            return None
        self.window_start = (self.zoom_node // nodes) * nodes * g
        count = min(nodes * g, self.n_ranks - self.window_start)
        return fit(count, g, per_row, width, height, cell_width)

    # -- mapping between ranks and cells -------------------------------------------------

    def _node_of(self, rank: int) -> int:
        return self.column_of(rank)

    @property
    def _column(self) -> int:
        """Cells in one column at full resolution: a node's GPUs, or the arrangement's."""
        return self.arrangement.column if self.arrangement else self.gpus_per_node

    @property
    def _unit(self) -> int:
        """Ranks behind one aggregated cell before cells merge: a node, or the arrangement's."""
        return self.arrangement.unit if self.arrangement else self.gpus_per_node

    def _pos(self, rank: int) -> int:
        return self._position[rank] if self.arrangement and 0 <= rank < self.n_ranks else rank

    def _rank_at(self, position: int) -> int:
        return self.arrangement.order[position] if self.arrangement else position

    @property
    def _ranks_per_cell(self) -> int:
        """Ranks behind one aggregated cell: its nodes' GPUs."""
        return self._unit * self.nodes_per_cell

    def _in_window(self, rank: int) -> bool:
        return self.window_start <= self._pos(rank) < self.window_start + self.item_count()

    def _item_of(self, rank: int) -> int:
        if self.mode in ("node", "cut"):
            return self._pos(rank) // self._ranks_per_cell
        return self._pos(rank) - self.window_start if self._in_window(rank) else -1

    def ranks_of_item(self, item: int) -> Sequence[int]:
        if self.mode in ("node", "cut"):
            start = item * self._ranks_per_cell
            positions = range(start, min(start + self._ranks_per_cell, self.n_ranks))
        else:
            positions = range(self.window_start + item, self.window_start + item + 1)
        if self.arrangement is None:
            return positions
        return [self.arrangement.order[p] for p in positions]

    def _order(self) -> tuple[int, ...] | None:
        return self.arrangement.order if self.arrangement else None

    def _cell_ranks(self) -> int:
        """Ranks behind each cell: 1, or whole nodes' when aggregated."""
        return self._ranks_per_cell if self.mode in ("node", "cut") else 1

    def _repaint_items(self, items: Sequence[int]) -> None:
        self._repaint_rows(map_levels.rows_of(self.layout_grid, items))

    def _repaint_rows(self, rows: Collection[int]) -> None:
        for y in rows:
            self._rows.pop(y, None)
            self.refresh(Region(0, y + self._y_offset, self.size.width, 1))

    # -- drawing -----------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._rows.clear()

    def render_line(self, y: int) -> Strip:
        y -= self._y_offset
        strip = self._rows.get(y)
        if strip is None:
            strip = self._draw_row(y)
            self._rows[y] = strip
        return strip.crop_extend(0, self.size.width, self.rich_style)

    def _draw_row(self, y: int) -> Strip:
        grid = self.layout_grid
        if y in self._marks:
            return self._marker_row(y)
        cells = grid.cells_in_row(y) if grid is not None and 0 <= y < grid.rows else None
        if cells is None:
            return Strip.blank(self.size.width, self.rich_style)
        cursor = self._item_of(self.cursor_rank)
        chars = [self._cell(cell, cursor) for cell in cells]
        for x in range(1, len(chars)):  # a wide cell carries the cursor mark once
            if chars[x][0] == CURSOR_MARK and cells[x] is cells[x - 1]:
                chars[x] = (" ", chars[x][1])
        label = self.get_component_rich_style("heatmap--label", partial=True)
        segments = [Segment(self._margin_label(grid, y), label)] if self._x_offset else []
        run_text, run_style = "", PLAIN
        for text, style in chars:
            if style == run_style:
                run_text += text
                continue
            if run_text:
                segments.append(Segment(run_text, run_style))
            run_text, run_style = text, style
        if run_text:
            segments.append(Segment(run_text, run_style))
        return Strip(segments, self._x_offset + len(chars)).apply_style(self.rich_style)

    def _marker_row(self, y: int) -> Strip:
        xs = sorted(self._marks[y])
        segments, at = [], 0
        mark = self.get_component_rich_style("heatmap--anomaly", partial=True)
        for x in xs:
            segments.append(Segment(" " * (self._x_offset + x - at), PLAIN))
            segments.append(Segment(ANOMALY_MARK, mark))
            at = self._x_offset + x + 1
        return Strip(segments, at).apply_style(self.rich_style)

    def _margin_width(self) -> int:
        """The widest label of the left margin, with its space: "n63 ", "pp3 "."""
        if self.arrangement is not None and self.arrangement.labels:
            return max(len(label) for label in self.arrangement.labels) + 1
        return len(f"n{max(0, self.n_ranks - 1) // max(1, self.gpus_per_node)} ")

    def _margin_label(self, grid: GridLayout, y: int) -> str:
        """The first node of a band, right-aligned in the left margin of its first row."""
        band, row = divmod(y, grid.column_rows + 1)
        label = ""
        if self.arrangement is not None and self.arrangement.labels:
            label = self._row_label(grid, row)
        elif row == 0:
            first_item = band * grid.columns_per_band * grid.column_cells
            label = f"n{self.ranks_of_item(first_item)[0] // self.gpus_per_node} "
        return label.rjust(self._x_offset) if len(label) <= self._x_offset else " " * self._x_offset

    def _row_label(self, grid: GridLayout, row: int) -> str:
        """The arrangement's name of the block (e.g. the pipeline stage) that starts in this
        text row of a band, if one does."""
        unit = 1 if self.mode in ("node", "cut") else self.arrangement.unit
        if self.mode in ("node", "cut") and self.nodes_per_cell > 1:
            return ""
        first, last = row * grid.cells_per_row, (row + 1) * grid.cells_per_row
        block = -(-first // unit)
        labels = self.arrangement.labels
        return f"{labels[block]} " if block * unit < last and block < len(labels) else ""

    def _cell(self, items: tuple[int, ...], cursor: int) -> tuple[str, Style]:
        if not items:
            return " ", PLAIN
        if cursor >= 0 and cursor in items:
            # The selected rank fills its whole character in its own colour, under a mark:
            # in a half-block cell its neighbour steps aside while the cursor is there.
            level = self._level(cursor)
            if self.glyphs:
                return palette.glyph(level), palette.CURSOR_GLYPH_STYLE
            return CURSOR_MARK, palette.cursor_style(self.colours, level)
        levels = [self._level(item) for item in items]
        if len(levels) == 2:
            return HALF_BLOCK, palette.half_block_style(self.colours, levels[0], levels[1])
        if self.glyphs:
            return palette.glyph(levels[0]), PLAIN
        return " ", palette.block_style(self.colours, levels[0])

    def _level(self, item: int) -> int:
        if item < 0 or item >= len(self._item_levels):
            return palette.EMPTY
        return self._item_levels[item]

    # -- mouse -------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        if self.layout_grid is None:
            return
        x, y = event.x - self._x_offset, event.y - self._y_offset
        item = self.layout_grid.item_at(x, y, 0)
        if item is not None and item == self._item_of(self.cursor_rank):
            item = self.layout_grid.item_at(x, y, 1) or item
        if item is not None:
            ranks = self.ranks_of_item(item)
            self.post_message(self.RankClicked(ranks[0]))
