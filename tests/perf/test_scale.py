"""At 16,384 ranks, without timings: a poll redraws only the heatmap rows whose cells changed,
the UI thread does no per-rank work (the maps' levels are planned in the poll worker's
thread), and the history's memory per rank stays within its bound."""

from __future__ import annotations

import threading
import tracemalloc
from dataclasses import replace

from ranktop.tui.core.history import HISTORY_METRICS, MAX_FRAMES, MAX_VALUES, History
from ranktop.tui.core.maps import scale as palette
from ranktop.tui.core.maps.levels import NO_BASE
from ranktop.tui.core.model import Frame
from ranktop.widgets.heatmap import Heatmap

from tests.tui.conftest import make_app, polled

NODES = 2048  # x 8 GPUs: 16,384 ranks
SICK_RANK = 5000
# A history value is a 4-byte float: per rank, one per metric and poll kept; 10% for the
# arrays' headers and the deques.
HISTORY_BYTES_PER_RANK = MAX_FRAMES * len(HISTORY_METRICS) * 4 * 1.1


def counting_rows(monkeypatch) -> dict[Heatmap, set[int]]:
    """Rows each heatmap draws afresh (row-cache misses) from now on."""
    drawn: dict[Heatmap, set[int]] = {}
    draw_row = Heatmap._draw_row

    def counting(self, y):
        drawn.setdefault(self, set()).add(y)
        return draw_row(self, y)

    monkeypatch.setattr(Heatmap, "_draw_row", counting)
    return drawn


async def test_a_poll_redraws_only_the_rows_whose_cells_changed(monkeypatch):
    app = make_app(at=40.0, nodes=NODES)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        await app.poll_once()  # maps laid out anew after the first frame drew all of it
        await pilot.pause()
        maps = [panel.heatmap for panel in app.cluster.panels]
        first = maps[0]
        metric = app.cluster.map_metrics[0]
        assert first.mode == "node"  # a cell per node (or more) at 120x40

        # The same analysis, but one rank of map 1 drops to nothing: only its node's cell
        # changes colour, and only the text row holding that cell may be drawn again.
        analysis = app.analysis
        values = list(analysis.frame.values[metric])
        values[SICK_RANK] = -1e9 if first.bad == "low" else 1e9
        frame = replace(analysis.frame, values={**analysis.frame.values, metric: values})
        sick = replace(analysis, frame=frame)
        drawn = counting_rows(monkeypatch)
        board = app.engine.board  # the engine's, whose last plan the maps drew
        board.reshape(app.cluster.map_geometry())
        app.cluster.show(polled(app, sick, board.plan(sick)))
        await pilot.pause()

        row = first.layout_grid.position(SICK_RANK // first._ranks_per_cell)[1]
        assert drawn.get(first) == {row}
        assert all(not drawn.get(other) for other in maps[1:])
        assert first.level_of(SICK_RANK) == palette.LEVELS - 1

        # Levels worked out from a plan this map did not draw: every row is drawn again.
        drawn.clear()
        unbased = {k: replace(v, base=NO_BASE) for k, v in board.plan(analysis).items()}
        app.cluster.show(polled(app, analysis, unbased))
        await pilot.pause()
        assert len(drawn.get(first, ())) == first.layout_grid.rows
        assert first.level_of(SICK_RANK) != palette.LEVELS - 1


async def test_the_ui_thread_quantises_no_rank_while_polling(monkeypatch):
    app = make_app(at=40.0, nodes=NODES)
    callers: list[str] = []
    quantise_all = palette.quantise_all

    def recording(values, *args, **kwargs):
        callers.append(threading.current_thread().name)
        return quantise_all(values, *args, **kwargs)

    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()  # the first frame may lay the maps out: not counted
        await pilot.pause()
        monkeypatch.setattr(palette, "quantise_all", recording)
        for _ in range(2):
            app.clock.now += 2.0
            await app.poll_once()
            await pilot.pause()
    main = threading.main_thread().name
    assert len(callers) == 2 * 4  # every map, every poll: planned...
    assert main not in callers  # ...and never on the UI thread


def test_history_memory_per_rank_stays_within_its_bound():
    ranks = NODES * 8
    history = History()
    series = [float(i % 100) for i in range(ranks)]
    frames = [Frame(time=float(t), values={m: series for m in HISTORY_METRICS})
              for t in range(2)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        t = 0
        while t < history.capacity + 10:  # past the capacity (fewer polls at this size)
            history.append(replace(frames[t % 2], time=float(t)), ranks)
            t += 1
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert 0 < len(history) <= MAX_FRAMES
    assert held / ranks <= HISTORY_BYTES_PER_RANK
    assert held <= MAX_VALUES * 4 * 1.1  # whatever the job's size
