"""The demo console driven with real keys: what a user sees after each one."""

from __future__ import annotations

from dataclasses import replace
from statistics import median

from ranktop.tui.screens.help import HelpScreen
from ranktop.tui.screens.jump import JumpScreen
from ranktop.widgets import palette
from ranktop.widgets.heatmap import CURSOR_MARK
from ranktop.widgets.panel import MetricPanel

from tests.tui.conftest import START, make_app, polled, screen_text


def heatmap(app, index):
    return app.screen.query_one(f"#map-{index}", MetricPanel).heatmap


async def started(app, pilot):
    await app.poll_once()
    await pilot.pause()


async def test_the_demo_shows_every_rank_in_four_maps_at_120x40():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        text = screen_text(app)
        assert "llama-70b-pretrain" in text
        assert "ranks 512/512 up" in text
        for title in ("SM activity", "GPU temperature", "NVLink bandwidth", "Step time"):
            assert title in text
        assert "min " in text and "med " in text and "max " in text
        for index in range(4):
            hm = heatmap(app, index)
            assert hm.mode == "rank"
            assert hm.item_count() == 512
            assert all(hm.level_of(r) < palette.LEVELS or r == 0 for r in range(512))
        assert "rank 0 gpu-node-000 GPU 0" in text
        assert "? Help" in text and "q Quit" in text


async def test_80x24_aggregates_four_maps_and_one_map_shows_every_rank():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        assert heatmap(app, 0).mode == "node"
        assert "per node" in screen_text(app)
        await pilot.press("1")
        assert heatmap(app, 0).mode == "rank"
        assert heatmap(app, 0).item_count() == 512
        assert not app.screen.query_one("#map-1").display
        assert "GPU temperature" not in screen_text(app)
        await pilot.press("2")
        assert heatmap(app, 1).mode == "rank"
        assert "GPU temperature" in screen_text(app)
        await pilot.press("0")
        assert all(app.screen.query_one(f"#map-{i}").display for i in range(4))
        assert "GPU temperature" in screen_text(app) and "SM activity" in screen_text(app)


async def test_arrows_and_vim_keys_move_one_cursor_shared_by_every_map():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("right")
        assert "rank 8 gpu-node-001 GPU 0" in screen_text(app)
        await pilot.press("down", "j")
        assert "rank 10 gpu-node-001 GPU 2" in screen_text(app)
        await pilot.press("k", "h")
        assert "rank 1 gpu-node-000 GPU 1" in screen_text(app)
        await pilot.press("left", "up", "up")  # at the top-left corner nothing moves
        assert "rank 0 gpu-node-000 GPU 0" in screen_text(app)
        await pilot.press("l")
        assert all(heatmap(app, i).cursor_rank == 8 for i in range(4))  # one shared cursor
        hm = heatmap(app, 0)
        _, y, _ = hm.layout_grid.position(8)
        assert CURSOR_MARK in "".join(s.text for s in hm.render_line(y + hm._y_offset))


async def laid_out(pilot, hm) -> None:
    """Wait until the map's layout holds still (a busy machine may lay it out again after the
    first frame): a click aimed by the old layout would land on another cell."""
    for _ in range(50):
        before = (hm.layout_grid, hm._x_offset, hm._y_offset, hm.region)
        await pilot.pause()
        if (hm.layout_grid, hm._x_offset, hm._y_offset, hm.region) == before:
            return
    raise AssertionError("the map kept being laid out again")


async def test_clicking_a_cell_selects_its_rank():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        hm = heatmap(app, 1)
        await laid_out(pilot, hm)
        x, y, _ = hm.layout_grid.position(37)
        await pilot.click(hm, offset=(x + hm._x_offset, y + hm._y_offset))
        await pilot.pause()
        assert "rank 36 gpu-node-004 GPU 4" in screen_text(app)
        await pilot.click(hm, offset=(x + hm._x_offset, y + hm._y_offset))  # again: the lower half
        await pilot.pause()
        assert "rank 37 gpu-node-004 GPU 5" in screen_text(app)


async def test_slash_jumps_to_a_rank_or_a_host_and_says_when_nothing_matches():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("slash")
        assert isinstance(app.screen, JumpScreen)
        await pilot.press(*"37", "enter")
        await pilot.pause()
        assert "rank 37 gpu-node-004 GPU 5" in screen_text(app)
        await pilot.press("slash", *"gpu-node-010", "enter")
        await pilot.pause()
        assert "rank 80 gpu-node-010 GPU 0" in screen_text(app)
        await pilot.press("slash", *"nosuchhost", "enter")
        await pilot.pause()
        assert isinstance(app.screen, JumpScreen)
        assert "No rank, host or node matches 'nosuchhost'" in screen_text(app)
        await pilot.press("escape")
        assert "rank 80 gpu-node-010 GPU 0" in screen_text(app)


async def test_slash_jumps_to_a_node_as_the_maps_label_it():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("slash", *"n37", "enter")
        await pilot.pause()
        assert "rank 296 gpu-node-037 GPU 0" in screen_text(app)
        await pilot.press("slash", *"N37:5", "enter")
        await pilot.pause()
        assert "rank 301 gpu-node-037 GPU 5" in screen_text(app)
        await pilot.press("slash", *"n64", "enter")  # 64 nodes: n0 to n63
        await pilot.pause()
        assert "No rank, host or node matches 'n64'" in screen_text(app)


async def test_z_says_why_it_does_nothing_when_every_rank_has_its_own_cell():
    app = make_app()
    said: list[str] = []
    app.notify = lambda message, **_: said.append(message)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        assert heatmap(app, 0).mode == "rank"
        await pilot.press("z")
        await pilot.pause()
        assert heatmap(app, 0).zoom_node is None and "zoomed" not in screen_text(app)
        assert said and said[-1].startswith(
            "Nothing to zoom: every rank already has a cell of its own")


async def test_pause_freezes_the_screen_and_says_so_until_resumed():
    app = make_app(at=20.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        step_before = app.cluster.frame.job["step"]
        await pilot.press("p")
        assert "PAUSED" in screen_text(app)
        app.clock.now = START + 30.0
        await started(app, pilot)
        assert app.cluster.frame.job["step"] == step_before
        assert "PAUSED" in screen_text(app)
        await pilot.press("p")
        assert "PAUSED" not in screen_text(app)
        assert app.cluster.frame.job["step"] > step_before


async def test_help_lists_every_key_and_closes():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for words in ("Search the ranks", "Freeze the screen", "Quit ranktop", "Show every key",
                      "Flip the step-time map", "Zoom into", "previous node"):
            assert words in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_q_quits():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("q")
        await pilot.pause()
        assert app._exit  # the app is on its way out
    assert app.return_code == 0


async def test_ctrl_c_quits_from_every_screen_and_text_field():
    for keys in ([], ["enter"], ["slash"], ["question_mark"]):  # cluster, rank, jump, help
        app = make_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await started(app, pilot)
            await pilot.press(*keys)
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert app._exit, keys
        assert app.return_code == 0


async def test_a_thermally_throttled_rank_is_hot_and_named_with_its_throttle_reason():
    app = make_app(at=40.0)  # rank 37 throttles from 6 s to 66 s
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        temperature = heatmap(app, 1)
        assert temperature.level_of(37) >= palette.LEVELS - 2
        assert median(temperature.level_of(r) for r in range(512)) <= 3
        await pilot.press("slash", *"37", "enter")
        await pilot.pause()
        assert "HW thermal" in screen_text(app)


async def test_a_dead_rank_is_missing_in_every_map_and_counted_in_the_header():
    app = make_app(at=190.0)  # rank 455 dies at 172 s for 48 s
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        text = screen_text(app)
        assert "ranks 511/512 up" in text and "1 missing" in text
        assert all(heatmap(app, i).level_of(455) == palette.MISSING for i in range(4))
        await pilot.press("slash", *"455", "enter")
        await pilot.pause()
        assert "no data from this rank" in screen_text(app)


async def test_the_straggler_shows_in_compute_time_after_c():
    app = make_app(at=90.0)  # rank 201 straggles from 50 s to 110 s
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        step = heatmap(app, 3)
        assert max(step.level_of(r) for r in range(512)) - step.level_of(201) <= 1
        await pilot.press("c")
        assert "Compute time" in screen_text(app)
        assert heatmap(app, 3).level_of(201) >= 3
        assert median(heatmap(app, 3).level_of(r) for r in range(512)) <= 1
        await pilot.press("c")
        assert "Step time" in screen_text(app)


async def test_zoom_shows_the_cursor_node_rank_by_rank_in_a_small_terminal():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await started(app, pilot)
        await pilot.press("slash", *"300", "enter", "z")
        await pilot.pause()
        hm = heatmap(app, 0)
        assert hm.mode == "zoom"
        assert hm.cursor_rank == 300
        assert hm.window_start <= 300 < hm.window_start + hm.item_count()
        assert "zoomed" in screen_text(app)
        await pilot.press("z")
        assert heatmap(app, 0).mode == "node"


async def test_resizing_down_to_40x12_and_back_never_crashes():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        for size in ((80, 24), (40, 12), (20, 6), (40, 12), (120, 40)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            await pilot.press("right", "down")
            text = " ".join(screen_text(app).split())
            assert ("rank" if size[0] >= 60 else "needs a terminal of at least") in text
        assert heatmap(app, 0).mode == "rank"
        assert heatmap(app, 0).item_count() == 512


async def test_the_keys_that_help_and_quit_stay_in_the_footer_of_a_small_terminal():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        for width, height in ((80, 24), (60, 18), (40, 12), (20, 6)):
            await pilot.resize_terminal(width, height)
            await pilot.pause()
            footer = screen_text(app).splitlines()[-1]
            assert footer.startswith("? Help q Quit"[:width]), (width, footer)


async def test_below_its_size_the_cluster_screen_says_what_it_needs_and_comes_back():
    app = make_app()
    async with app.run_test(size=(40, 12)) as pilot:
        await started(app, pilot)
        text = " ".join(screen_text(app).split())
        assert "needs a terminal of at least 60x18 (this one is 40x12)" in text
        assert "SM activity" not in text  # no empty boxes
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        text = screen_text(app)
        assert "needs a terminal" not in text and "SM activity" in text


async def test_no_color_draws_levels_as_glyphs(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(at=190.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("1")
        await pilot.pause()
        text = screen_text(app)
        assert "▀" not in text
        assert palette.MISSING_GLYPH in text  # the dead rank
        assert heatmap(app, 0).item_count() == 512


async def test_without_colour_alarms_are_reversed_and_marked(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(at=200.0)  # rank 455 is dead, the others hang
    async with app.run_test(size=(120, 40)) as pilot:
        for at in range(140, 201, 4):
            app.clock.now = START + at
            await started(app, pilot)
        spans = {segment.text.strip(): segment.style
                 for strip in app.screen._compositor.render_strips() for segment in strip}
        for alarm in ("▲ 1 missing", "● critical"):
            style = next(style for text, style in spans.items() if text.startswith(alarm))
            assert style.reverse and style.bold, (alarm, style)
        assert any(text.startswith("▲ no progress for") for text in spans)


async def test_16384_ranks_aggregate_per_node_and_zoom_back_to_ranks():
    app = make_app(at=40.0, nodes=2048, gpus=8)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        temperature = heatmap(app, 1)
        assert temperature.mode == "node"
        assert temperature.nodes_per_cell == 2  # a quarter of the screen: two nodes a cell
        assert temperature.item_count() == 1024
        assert "ranks 16384/16384 up" in screen_text(app)
        assert "per 2 nodes" in screen_text(app)
        # rank 37 (node 4) throttles: its cell shows the worst GPU
        assert temperature.level_of(37) >= palette.LEVELS - 2
        await pilot.press("2")
        assert heatmap(app, 1).nodes_per_cell == 1
        assert heatmap(app, 1).item_count() == 2048
        assert heatmap(app, 1).level_of(37) >= palette.LEVELS - 2
        await pilot.press("slash", *"37", "enter", "z")
        await pilot.pause()
        assert heatmap(app, 1).mode == "zoom"
        assert heatmap(app, 1).window_start <= 37 < heatmap(app, 1).window_start + 64


async def test_a_user_keymap_rebinds_a_key_by_its_id(tmp_path):
    from dataclasses import replace

    app = make_app()
    app.settings = replace(app.settings, keymap={"app.pause": "space"})
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("space")
        assert "PAUSED" in screen_text(app)
        await pilot.press("p")  # the old key no longer pauses
        assert "PAUSED" in screen_text(app)
        await pilot.press("question_mark")
        assert "space" in screen_text(app)


async def test_the_command_palette_goes_to_a_rank_and_shows_a_metric():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("ctrl+p", *"201")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert "rank 201 gpu-node-025 GPU 1" in screen_text(app)
        await pilot.press("ctrl+p", *"show GPU temperature")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.cluster.solo == 1


async def test_the_command_palette_finds_every_host_holding_what_is_typed():
    from textual.command import CommandPalette

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("ctrl+p", *"gpu-node-02")
        await pilot.pause(0.5)
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        shown = screen_text(app)
        assert all(f"gpu-node-02{n}" in shown for n in range(10))
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.cluster.rank_map.ranks[app.cluster.cursor].host.startswith("gpu-node-02")


async def test_typing_q_or_question_mark_in_the_jump_prompt_does_not_quit_or_open_help():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("slash", "q", "question_mark", "p")
        assert isinstance(app.screen, JumpScreen)
        assert app.screen.query_one("#jump-input").value == "q?p"
        assert not app.cluster.paused
        await pilot.press("escape")
        assert app.is_running


async def test_stale_ranks_are_drawn_stale_and_a_stale_source_frames_the_maps():
    from dataclasses import replace

    from ranktop.tui.core.model import Health, SourceStatus

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        frame = replace(app.cluster.frame, stale=frozenset({5, 9}))
        status = SourceStatus("test source", Health.STALE, since=app.clock() - 45,
                              message="connection refused")
        app.cluster.show(polled(app, replace(app.analysis, frame=frame, status=status)))
        await pilot.pause()
        assert heatmap(app, 1).level_of(5) == palette.STALE
        assert heatmap(app, 1).level_of(6) < palette.LEVELS
        text = screen_text(app)
        assert "STALE for 45.0 s: connection refused" in text
        assert "stale" in text  # the legend's key appears once cells are stale
        assert app.cluster.has_class("-stale")


async def test_the_anomaly_panel_names_rank_host_gpu_and_n_visits_each(tmp_path):
    from ranktop.tui.core.events import EventLog

    app = make_app(at=100.0, event_log=EventLog(tmp_path / "events.jsonl"))
    async with app.run_test(size=(120, 40)) as pilot:
        # node 37's NVLink drops, then rank 128's ECC error, while rank 201 still straggles
        for seconds in range(100, 136, 2):
            app.clock.now = START + seconds
            await started(app, pilot)
        text = screen_text(app)
        # the rows, by severity, and the anomalies folded under them
        assert "anomalies (2 critical, 1 major; 2 folded)" in text
        assert "● 2 critical ● 1 major (2 folded)" in text  # the header counts them too
        # one row per root: the remapped row under the ECC error, the node's NVLink drop
        # under its CRC errors
        assert "rank 128 gpu-node-016 GPU 0  ecc → memory +1: 1 uncorrectable (double-bit)" in text
        assert "rank 201 gpu-node-025 GPU 1  straggler: compute 1.45x the median" in text
        assert "rank 300 gpu-node-037 GPU 4  nvlink errors → nvlink: NVLink CRC error(s)" in text
        assert sum("rank 128 gpu-node-016" in row for row in text.splitlines()) == 1
        await pilot.press("n")  # the most severe first, newest first: the ECC error,
        assert app.cluster.cursor == 128  # its remapped row on the same row
        assert "▶● critical" in screen_text(app)
        await pilot.press("n")  # the older straggler
        assert app.cluster.cursor == 201
        await pilot.press("n")  # the GPU whose CRC errors climb, its node's NVLink drop
        assert app.cluster.cursor == 300  # folded under it
        # By 134 s the errors have passed the bar on a second GPU of the node: drain it.
        assert ("▶● major    ⇒ drain the node · rank 300 gpu-node-037 GPU 4  nvlink "
                "errors → nvlink") in screen_text(app)
        await pilot.press("N")
        assert app.cluster.cursor == 201
        assert heatmap(app, 1).marked == {128, 201, 296, 300}
        assert "▲" in screen_text(app)
    kinds = {(e.kind, e.rank, e.state) for e in app.engine.pipeline.analyser.journal.log.read()}
    # Those begun before the console started at 100 s too, each from its start.
    assert {("nvlink", 296, "start"), ("ecc", 128, "start"), ("straggler", 201, "start")} <= kinds
    straggler = next(e for e in app.engine.pipeline.analyser.journal.log.read()
                     if (e.kind, e.rank, e.state) == ("straggler", 201, "start"))
    assert straggler.time == START + 50.0  # when it began, not the console's first poll


async def test_the_all_clear_waits_for_the_detectors_and_n_without_anomalies_says_so():
    app = make_app(at=1.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        assert "checking…" in screen_text(app) and "no anomalies" not in screen_text(app)
        for _ in range(2):
            app.clock.now += 2
            await started(app, pilot)
        assert "✓ no anomalies" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert app.cluster.cursor == 0


async def test_the_cursor_stays_on_its_rank_when_the_maps_are_laid_out_anew():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("slash", *"37", "enter")
        await pilot.pause()
        # as when the ranks are re-learned
        await app.cluster.use_rank_map(app.engine.source.rank_map, 1)
        await pilot.pause()
        assert app.cluster.cursor == 37
        assert all(heatmap(app, i).cursor_rank == 37 for i in range(4))
        assert "rank 37 gpu-node-004 GPU 5" in screen_text(app)


async def test_a_rank_map_equal_to_the_shown_one_does_not_lay_the_maps_out_anew():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        shown = app.cluster.rank_map
        app.engine.source.rank_map = replace(shown)  # the same ranks, as a new object
        app.clock.now += 2.0
        await started(app, pilot)
        assert app.cluster.rank_map is shown
