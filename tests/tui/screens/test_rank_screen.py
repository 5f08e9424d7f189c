"""The rank screen driven with real keys: values against the median, log tail, alerts."""

from __future__ import annotations

import asyncio

from ranktop.tui.core.events import Event, EventLog
from ranktop.tui.screens.evidence import EvidenceScreen
from ranktop.tui.screens.rank import RankScreen
from ranktop.tui.simulator.scenario import Fault
from ranktop.widgets.log_view import LogView

from tests.tui.conftest import START, make_app, screen_text, triage_done
from tests.tui.core.job_run import job


async def poll(app, pilot, at: float | None = None):
    """One poll, then the demo's logs written up to it (they are written beside the poll)."""
    if at is not None:
        app.clock.now = START + at
    await app.poll_once()
    await asyncio.to_thread(app.engine.source.flush_logs)
    await triage_done(app)  # the next poll shows what the triage found
    await pilot.pause()


async def open_rank(app, pilot, rank: int):
    await pilot.press("slash", *str(rank), "enter", "enter")
    await pilot.pause()
    assert isinstance(app.screen, RankScreen)


async def settle(pilot, seconds: float = 0.3):
    await pilot.pause(seconds)
    await pilot.pause()


async def test_enter_opens_the_rank_with_its_values_against_the_median_and_esc_returns():
    app = make_app(at=40.0)
    async with app.run_test(size=(120, 40)) as pilot:
        for at in range(30, 42, 2):
            await poll(app, pilot, at)
        await open_rank(app, pilot, 37)
        text = screen_text(app)
        assert "rank 37" in text and "gpu-node-004 GPU 5" in text
        assert "NVIDIA H100 80GB HBM3" in text
        assert "GPU temperature" in text and "job median" in text
        assert "88°C" in text  # the rank, hot, next to a cool median
        assert "thermal: GPU 88 °C" in text
        assert "no log files configured" in text
        assert "no Alertmanager configured" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, RankScreen)


async def test_brackets_step_through_ranks_and_n_goes_to_an_anomalous_one():
    app = make_app(at=40.0)
    async with app.run_test(size=(120, 40)) as pilot:
        for at in range(26, 42, 2):
            await poll(app, pilot, at)
        await open_rank(app, pilot, 0)
        await pilot.press("right_square_bracket")
        assert app.screen.rank == 1
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert app.screen.rank == 511
        await pilot.press("n")
        assert app.screen.rank == 37
        assert "rank 37" in screen_text(app)


async def test_the_log_tail_follows_filters_and_searches(tmp_path):
    app = make_app(at=210.0, log_root=tmp_path / "logs")  # the others' watchdogs fired at ~203 s
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 210.0)
        await open_rank(app, pilot, 3)
        await settle(pilot)
        log = app.screen.query_one(LogView)
        assert log.lines, screen_text(app)
        assert "stderr.log" in screen_text(app)
        kinds = {kind for kind, _ in log.lines}
        assert "watchdog" in kinds and "nccl_info" in kinds
        await pilot.press("w")
        assert log._shown and all(kind != "nccl_info" for kind, _ in log._shown)
        await pilot.press("w", "slash", *"Watchdog", "enter")
        await pilot.pause()
        assert "/Watchdog: match " in screen_text(app)
        assert not log.following
        await pilot.press("G")
        assert log.following
        await pilot.press("f")
        assert not log.following


async def test_q_on_the_rank_screen_goes_back_and_help_says_so():
    app = make_app(at=40.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 40.0)
        await open_rank(app, pilot, 37)
        await pilot.press("question_mark")
        assert "esc, q" in screen_text(app) and "^c quits ranktop from any screen" in " ".join(
            screen_text(app).split())
        await pilot.press("escape", "q")
        await pilot.pause()
        assert not isinstance(app.screen, RankScreen)
        assert app.is_running and not app._exit


async def test_at_80x24_the_rank_screen_keeps_its_title_its_trends_and_its_keys():
    app = make_app(at=40.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await poll(app, pilot, 40.0)
        await open_rank(app, pilot, 37)
        lines = screen_text(app).splitlines()
        # its hot GPU first, then the slowing it explains (caught up on at start)
        assert "rank 37" in lines[0] and "major thermal" in "\n".join(lines[:3])
        assert "GPU temperature" in screen_text(app) and "median" in screen_text(app)
        assert lines[-1].startswith("? Help esc Back")
        await pilot.resize_terminal(50, 16)
        await pilot.pause()
        text = " ".join(screen_text(app).split())
        assert "rank screen needs a terminal of at least 60x20 (this one is 50x16)" in text


async def test_while_a_search_is_on_n_and_N_step_through_its_matches_in_any_case(tmp_path):
    app = make_app(at=210.0, log_root=tmp_path / "logs")
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 210.0)
        await open_rank(app, pilot, 3)
        await settle(pilot)
        log = app.screen.query_one(LogView)
        lowered = sum("rank 3" in text.lower() for _, text in log.lines)  # [rank 3], Rank 3
        assert lowered > 2
        await pilot.press("slash", *"rank 3", "enter")  # no capital: any case
        await pilot.pause()
        assert len(log.matches) == lowered
        last = log.current
        assert f"/rank 3: match {last + 1} of {lowered}" in screen_text(app)
        await pilot.press("N", "N")
        assert app.screen.rank == 3  # n / N stay in the log while searching
        assert log.current == last - 2
        assert f"match {last - 1} of {lowered}" in screen_text(app)
        await pilot.press("n")
        assert log.current == last - 1
        await pilot.press("slash", *"Rank 3", "enter")  # a capital: this case only
        await pilot.pause()
        exact = sum("Rank 3" in text for _, text in log.lines)
        assert len(log.matches) == exact < lowered
        await pilot.press("slash", "enter")  # an empty search clears it
        await pilot.pause()
        assert (log.search, log.matches, log.current) == ("", [], None)
        await pilot.press("n")  # back to the next anomalous rank: the log is left alone
        assert log.current is None and "/Rank 3" not in screen_text(app)


async def test_following_and_warnings_only_show_in_the_log_title(tmp_path):
    app = make_app(at=210.0, log_root=tmp_path / "logs")
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 210.0)
        await open_rank(app, pilot, 3)
        await settle(pilot)
        assert "log · following the end" in screen_text(app)
        await pilot.press("f", "w")
        text = screen_text(app)
        assert "not following (f follows)" in text
        assert "warnings and errors only (w: every line)" in text
        assert "stderr.log" in text  # which file, after the modes


async def test_a_long_log_path_folds_instead_of_being_cut(tmp_path):
    deep = tmp_path / ("a-long-folder-name-" * 6) / "logs"
    app = make_app(at=40.0, log_root=deep)
    async with app.run_test(size=(80, 30)) as pilot:
        await poll(app, pilot, 40.0)
        await open_rank(app, pilot, 3)
        await settle(pilot)
        title = app.screen.query_one("#log-title")
        shown = "".join(line.rstrip() for line in screen_text(app).splitlines()[
            title.region.y:title.region.bottom])
        assert "stderr.log" in shown.replace(" ", "")


async def test_escape_sequences_in_a_folder_name_never_reach_the_log_title(tmp_path):
    hostile = tmp_path / "runs\x1bc\x1b]0;owned\x07" / "logs"  # reset, and a pane title
    app = make_app(at=40.0, log_root=hostile)
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 40.0)
        await open_rank(app, pilot, 3)
        await settle(pilot)
        title = app.screen.query_one("#log-title")
        shown = title.render()
        assert "stderr.log" in str(shown) and "runs" in str(shown)
        assert "\x1b" not in str(shown) and "\x07" not in str(shown)
        assert "\x1b" not in str(title.tooltip) and "\x07" not in str(title.tooltip)


async def test_alert_history_lists_this_ranks_events(tmp_path):
    events = EventLog(tmp_path / "events.jsonl")
    app = make_app(at=40.0, event_log=events)
    async with app.run_test(size=(120, 40)) as pilot:
        events.append([Event(time=START + 30, state="start", kind="thermal", severity="major",
                             rank=37, host="gpu-node-004", gpu=5, job=app.engine.source.job_name,
                             summary="GPU 88 °C")])
        await poll(app, pilot, 40.0)
        await open_rank(app, pilot, 37)
        await settle(pilot)
        text = screen_text(app)
        assert "thermal" in text and "GPU 88 °C" in text and "ranktop" in text
        table = app.screen.query_one("#rank-alerts")
        columns = [str(column.label) for column in table.ordered_columns]
        row = dict(zip(columns, map(str, table.get_row_at(0)), strict=True))
        assert (row["alert"], row["severity"], row["state"]) == ("thermal", "major", "start")
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert "none for this rank in the last hour" in screen_text(app)


async def test_a_hang_names_the_rank_the_others_wait_for_with_evidence_one_key_away(tmp_path):
    app = make_app(at=150.0, log_root=tmp_path / "logs")
    async with app.run_test(size=(120, 40)) as pilot:
        for at in range(150, 216, 4):  # rank 455 dies at 172 s; the others time out ~30 s later
            await poll(app, pilot, float(at))
        assert any(a.kind == "hang" and a.rank == 455 for a in app.cluster.anomalies)
        (row,) = [line for line in screen_text(app).splitlines() if "rank 455 gpu-node" in line
                  and "●" in line]
        assert "→ hang" in row  # folded under what killed the rank, named on its row
        await pilot.press("e")
        assert isinstance(app.screen, EvidenceScreen)
        assert "rank 455" in screen_text(app) and "waited for" in screen_text(app)
        await pilot.press("escape")
        await open_rank(app, pilot, 455)
        assert "hang: rank 455 is dead" in screen_text(app)
        assert "511 of 511 live ranks timed out" in screen_text(app)


async def test_a_frozen_rank_is_named_on_the_cluster_and_on_its_own_screen(tmp_path):
    frozen = Fault("collective_hang", 11, 20.0, 100.0, {"cause": "missing", "dumps": "none"})
    app = make_app(at=0.0, log_root=tmp_path / "logs", cluster=job((frozen,)))
    async with app.run_test(size=(120, 40)) as pilot:
        for at in range(0, 56, 2):  # frozen at 20 s; the others' watchdogs fire at ~50 s
            await poll(app, pilot, float(at))
        assert [(a.rank, a.confirmed) for a in app.cluster.anomalies if a.kind == "hang"] == [
            (11, True)]
        # the frozen rank is the root: what its hang causes job-wide folded under it
        assert "hang → job stall" in screen_text(app)
        assert ": rank 11 is frozen, the others wait for it" in screen_text(app)
        await open_rank(app, pilot, 11)
        text = screen_text(app)
        assert "no active anomaly on this rank" not in text
        assert "● critical hang: rank 11 is frozen, the others wait for it: it logged no" in text


async def test_history_is_there_at_once_from_the_source():
    from ranktop.widgets.trend import Trend

    app = make_app(at=60.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 60.0)  # one poll of the app's own: the rest comes from the source
        await open_rank(app, pilot, 37)
        await settle(pilot, 0.5)
        trend = app.screen.query_one("#trend-temperature", Trend)
        assert len(trend.values) > 10
        assert max(trend.values) > 84 and min(trend.values) < 70  # it heated up from 6 s on
        assert max(trend.medians) < 70


async def test_help_on_the_rank_screen_lists_its_keys_and_the_logs():
    app = make_app(at=40.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 40.0)
        await open_rank(app, pilot, 37)
        await pilot.press("question_mark")
        text = screen_text(app)
        for words in ("Back to the cluster", "else the next rank with an active anomaly",
                      "Show only warnings and errors", "Follow the end of the log",
                      "Search the log tail"):
            assert words in text


CRASH_END = "terminate called after throwing an instance of 'c10::DistBackendError'"


async def test_the_dead_rank_s_log_ends_on_its_crash_and_o_names_each_line_s_file(tmp_path):
    app = make_app(at=200.0, log_root=tmp_path / "logs")  # rank 455 died at 172 s
    async with app.run_test(size=(120, 40)) as pilot:
        await poll(app, pilot, 200.0)
        await open_rank(app, pilot, 455)
        await settle(pilot)
        log = app.screen.query_one(LogView)
        assert log.lines and log.lines[-1][1] == CRASH_END, list(log.lines)[-5:]
        assert CRASH_END in screen_text(app)  # following the end: the crash is in view
        assert f"stderr.log: {CRASH_END}" not in screen_text(app)
        await pilot.press("o")
        await pilot.pause()
        assert f"stderr.log: {CRASH_END}" in screen_text(app)
        assert {"stderr.log", "stdout.log"} <= set(log.origins)


async def test_at_80_columns_W_wraps_a_long_log_line_so_its_end_shows(tmp_path):
    end = "so the stacktrace below might be incorrect."
    app = make_app(at=200.0, log_root=tmp_path / "logs")
    async with app.run_test(size=(80, 30)) as pilot:
        await poll(app, pilot, 200.0)
        await open_rank(app, pilot, 455)
        await settle(pilot)
        assert "CUDA kernel errors might be" in screen_text(app)
        assert end not in " ".join(screen_text(app).split())
        assert "W Wrap" in screen_text(app).splitlines()[-1]
        await pilot.press("W")
        await pilot.pause()
        assert end in " ".join(screen_text(app).split())
        await pilot.press("W")
        await pilot.pause()
        assert end not in " ".join(screen_text(app).split())


async def test_the_rank_screen_wraps_each_anomaly_so_every_word_of_it_shows_at_80x24():
    app = make_app(at=100.0)  # rank 201 straggles: a long line of evidence
    async with app.run_test(size=(80, 24)) as pilot:
        for seconds in range(100, 124, 2):
            await poll(app, pilot, seconds)
        await open_rank(app, pilot, 201)
        await settle(pilot)
        (straggler,) = [a for a in app.analysis.anomalies if a.rank == 201]
        assert len(straggler.summary) > 80  # longer than a line
        shown = " ".join(" ".join(line.strip() for line in screen_text(app).splitlines()
                                  ).split())
        assert " ".join(straggler.summary.split()) in shown
