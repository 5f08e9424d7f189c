"""The cluster screen of a job without GPU data (a CPU job, or GPUs nobody exports): ranks
named by their local rank, the GPU maps folded away and said so once, and back with the
first GPU value."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.widgets.heatmap import Heatmap
from ranktop.widgets.panel import MetricPanel

from tests.tui.conftest import START, CpuCluster, make_app, screen_text

FOLDED_NOTE = ("no GPU metrics (DCGM) for this job: SM activity, GPU temperature, "
               "NVLink bandwidth not shown — see check-config")


def panel(app, index: int) -> MetricPanel:
    return app.screen.query_one(f"#map-{index}", MetricPanel)


async def poll_at(app, pilot, at: float) -> None:
    app.clock.now = START + at
    await app.poll_once()
    await pilot.pause()


async def test_a_job_without_gpu_data_names_local_ranks_and_folds_the_gpu_maps():
    app = make_app(at=60.0, cluster=CpuCluster())
    async with app.run_test(size=(120, 40)) as pilot:
        await poll_at(app, pilot, 60.0)
        text = screen_text(app)
        assert "rank 0 gpu-node-000 local rank 0" in text
        assert "GPU 0" not in text
        # the rank's values on its line, though the maps were laid out anew for the names
        assert re.search(r"local rank 0 +step [0-9.]+ s +compute [0-9.]+ s", text)
        assert [panel(app, i).display for i in range(4)] == [False, False, False, True]
        assert text.count(FOLDED_NOTE) == 1
        assert "not exported —" not in text
        # the step-time map takes the room of the four
        maps = app.screen.query_one("#maps").region
        assert panel(app, 3).region.width == maps.width
        assert panel(app, 3).region.height == maps.height
        # the cursor moves on the map that is shown
        await pilot.press("right", "down")
        assert "rank 9 gpu-node-001 local rank 1" in screen_text(app)
        await pilot.press("left", "up")
        # the straggler is still found, and named by its local rank
        assert "local rank" in app.screen.query_one("#anomalies").render_line(1).text
        await pilot.press("enter")
        await pilot.pause()
        text = screen_text(app)
        assert "gpu-node-000 local rank 0" in text
        # the rank's trends of GPU metrics fold as its maps do
        assert "Step time" in text and "Compute time" in text
        assert "GPU temperature" not in text and "SM activity" not in text


async def test_the_gpu_maps_come_back_with_the_first_gpu_value():
    app = make_app(at=60.0, cluster=CpuCluster(gpus_from=70.0))
    async with app.run_test(size=(120, 40)) as pilot:
        await poll_at(app, pilot, 60.0)
        assert FOLDED_NOTE in screen_text(app)
        await poll_at(app, pilot, 72.0)
        text = screen_text(app)
        assert all(panel(app, i).display for i in range(4))
        assert "no GPU metrics" not in text
        assert "rank 0 gpu-node-000 GPU 0" in text and "local rank" not in text


async def test_a_gpu_map_is_not_folded_on_its_first_empty_poll():
    app = make_app(at=0.0, cluster=CpuCluster())
    async with app.run_test(size=(120, 40)) as pilot:
        await poll_at(app, pilot, 0.0)
        assert all(panel(app, i).display for i in range(4))
        assert "not exported" in screen_text(app) and "no GPU metrics" not in screen_text(app)
        await poll_at(app, pilot, 12.0)
        assert not panel(app, 0).display
        assert FOLDED_NOTE in screen_text(app)


async def test_a_folded_map_shows_full_size_on_its_key_and_says_why():
    app = make_app(at=60.0, cluster=CpuCluster())
    async with app.run_test(size=(80, 24)) as pilot:
        await poll_at(app, pilot, 60.0)
        await pilot.press("2")
        assert panel(app, 1).display and not panel(app, 3).display
        assert "not exported" in screen_text(app)
        await pilot.press("0")
        assert [panel(app, i).display for i in range(4)] == [False, False, False, True]


class WithoutNvlink(SimCluster):
    """The demo's job on GPUs without NVLink (PCIe cards): every GPU metric but that one."""

    def __init__(self) -> None:
        super().__init__(64, 8, seed=7)

    def frame_at(self, t: float):
        frame = super().frame_at(t)
        return replace(frame, values={metric: values for metric, values in frame.values.items()
                                      if metric != "nvlink"})


async def test_one_gpu_metric_never_exported_folds_alone_and_the_last_map_spans_the_row():
    app = make_app(at=60.0, cluster=WithoutNvlink())
    async with app.run_test(size=(120, 40)) as pilot:
        await poll_at(app, pilot, 60.0)
        text = screen_text(app)
        assert [panel(app, i).display for i in range(4)] == [True, True, False, True]
        assert text.count("not exported for this job: NVLink bandwidth not shown") == 1
        assert "no GPU metrics" not in text and "rank 0 gpu-node-000 GPU 0" in text
        maps = app.screen.query_one("#maps").region
        assert panel(app, 0).region.width + panel(app, 1).region.width == maps.width
        assert panel(app, 3).region.width == maps.width


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_the_maps_fill_their_panels(size):
    app = make_app(at=60.0)
    async with app.run_test(size=size) as pilot:
        await app.poll_once()
        await pilot.pause()
        for heatmap in app.cluster.query(Heatmap):
            grid = heatmap.layout_grid
            margin = len("n63 ")  # the node labels' room
            assert grid.width >= heatmap.size.width - margin - 2, (size, grid, heatmap.size)
            assert grid.rows >= heatmap.size.height - 2
