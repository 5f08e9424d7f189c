"""Nothing hidden: every active and pending anomaly is reachable on the cluster screen."""

from __future__ import annotations

from dataclasses import replace

import pytest
from ranktop.tui.core.anomaly import Anomaly

from tests.tui.conftest import make_app, polled, screen_text


def many(count: int) -> tuple[Anomaly, ...]:
    """``count`` anomalies on distinct ranks, the last few pending, summaries long enough to
    wrap a 120-column line if they were allowed to."""
    found = []
    for index in range(count):
        pending = index >= count - 3
        found.append(Anomaly("thermal", "major", 10 + index,
                             f"marker-{index:02d} " + "GPU 88 °C, throttling, " * 6,
                             since=0.0, held=2.0 if pending else 30.0, confirm_after=10.0))
    return tuple(sorted(found, key=lambda a: a.order))


async def shown(app, pilot, anomalies) -> None:
    await app.poll_once()
    await pilot.pause()
    app.cluster.show(polled(app, replace(app.analysis, anomalies=anomalies)))
    await pilot.pause()


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_n_brings_every_anomaly_into_view_one_line_each(size):
    app = make_app(at=20.0)
    anomalies = many(14)
    async with app.run_test(size=size) as pilot:
        await shown(app, pilot, anomalies)
        text = screen_text(app)
        assert "more below" in text  # not all fit: the panel says so
        assert text.count("marker-") < 14
        for index, anomaly in enumerate(anomalies):
            await pilot.press("n")
            text = screen_text(app)
            marker = anomaly.summary.split()[0]
            line = next(row for row in text.splitlines() if marker in row)
            assert "▶" in line, f"row {index} is not highlighted in view"
            assert app.cluster.cursor == anomaly.rank
        await pilot.press("N")  # and back up, past the top of what was shown
        assert anomalies[-2].summary.split()[0] in screen_text(app)


async def test_a_long_anomaly_takes_one_line_cut_with_an_ellipsis():
    app = make_app(at=20.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(app, pilot, many(2))
        rows = [row for row in screen_text(app).splitlines() if "marker-" in row]
        assert len(rows) == 2 and all(row.rstrip().endswith("…") for row in rows)
        assert not any("throttling" in row and "marker-" not in row
                       for row in screen_text(app).splitlines()[-6:])


async def test_the_panel_says_checking_then_source_down_never_a_false_all_clear():
    from ranktop.tui.core.model import Health, SourceStatus

    app = make_app(at=1.0)  # healthy: nothing to show yet
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        assert "checking…" in screen_text(app)
        down = SourceStatus("test", Health.STALE, since=0.0, message="connection refused")
        app.cluster.show(polled(app, replace(app.analysis, status=down, warmed_up=True)))
        await pilot.pause()
        text = screen_text(app)
        assert "source down: nothing can be judged" in text and "no anomalies" not in text


async def test_e_before_a_verdict_says_what_triage_waits_for():
    app = make_app(at=174.0)  # rank 455 died at 172 s; no log files: no verdict can come
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(8):
            await app.poll_once()
            await pilot.pause()
            app.clock.now += 2.0
        assert app.analysis.hang is None and app.analysis.progress.stalled(app.clock.now)
        await pilot.press("e")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert said and said[-1].startswith("No verdict yet: no progress for")
        assert "watchdog timeout so far" in said[-1]


async def test_the_maps_keep_their_layout_as_the_panel_fills_and_empties():
    app = make_app(at=20.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause(0.1)  # the first frame's own layout settles
        heatmaps = [panel.heatmap for panel in app.cluster.panels]
        regions = [heatmap.region for heatmap in heatmaps]
        grids = [heatmap.layout_grid for heatmap in heatmaps]
        for count in (14, 1, 0):
            app.cluster.show(polled(app, replace(app.analysis, anomalies=many(count))))
            await pilot.pause()
            assert [heatmap.region for heatmap in heatmaps] == regions
            assert [heatmap.layout_grid for heatmap in heatmaps] == grids
            if count == 14:
                assert "+" in screen_text(app) and "more below" in screen_text(app)


async def test_maps_laid_out_anew_while_paused_keep_what_the_panel_said():
    app = make_app(at=20.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.poll_once()
        await pilot.pause()
        rows = [row for row in screen_text(app).splitlines() if "straggler" in row]
        assert rows
        await pilot.press("p")
        await app.cluster.use_rank_map(app.engine.source.rank_map, 1)  # the ranks re-learned
        await pilot.pause()
        assert [row for row in screen_text(app).splitlines() if "straggler" in row] == rows
