"""The jobs list in the console: worst first, `/` filters, Enter opens that job's console,
Esc or q comes back to the list, which kept refreshing meanwhile."""

from __future__ import annotations

import asyncio

from ranktop.tui.app.fleet import FleetApp
from ranktop.tui.cli.fleet_console import demo_fleet_app
from ranktop.tui.engine.fleet import FleetEngine
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.screens.jobs import JobConsoleScreen, JobsScreen
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source
from ranktop.tui.sources.demo_fleet import DemoFleet
from ranktop.tui.sources.prometheus.fleet import FleetReader
from textual.widgets import DataTable

from tests.tui.conftest import START, FakeClock, screen_text
from tests.tui.sources.prometheus.test_fleet import FakeFleet


def _app(jobs: int = 4):
    clock = FakeClock(START + 20)
    settings = load_settings(overrides={"prometheus": {"url": "http://prometheus:9090"}},
                             environ={})
    backend = FakeFleet(jobs)
    fleet = FleetEngine(settings, FleetReader(settings, client=backend, clock=clock), clock)
    opened: list[str] = []

    def open_engine(job_settings):
        opened.append(job_settings.prometheus.job)
        return ThreadEngine(job_settings, demo_source(DemoSettings(4, 8, seed=7), clock,
                                                      started=START), clock=clock)

    idle = ThreadEngine(settings, demo_source(DemoSettings(1, 1, seed=7), clock,
                                              started=START), clock=clock)
    return FleetApp(settings, fleet, open_engine, idle, clock=clock), backend, opened


def _names(app) -> list[str]:
    table = app.screen.query_one(DataTable)
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


async def test_the_list_shows_the_worst_first_and_opens_a_job_with_enter():
    app, _backend, opened = _app()
    async with app.run_test(size=(120, 30)) as pilot:
        while not app.jobs.snapshot.rows:
            await pilot.pause(0.05)
        await pilot.pause()
        assert isinstance(app.screen, JobsScreen)
        assert _names(app)[:3] == ["job-0002", "job-0003", "job-0001"]
        text = screen_text(app)
        assert "4 jobs, 3 unhealthy" in text and "1 rank missing" in text
        assert "stalled" in text

        await pilot.press("down", "enter")  # the second row: the job with a missing rank
        while not isinstance(app.screen, JobConsoleScreen):
            await pilot.pause(0.05)
        assert opened == ["job-0003"] and app.job_open == "job-0003"
        await app.poll_once()
        await pilot.pause()
        text = screen_text(app)  # the (demo) job's console, its q leading back to the list
        assert "llama-70b-pretrain" in text and "q Back" in text
        # the list goes on refreshing behind the console
        assert [w.name for w in app.workers if w.group == "fleet" and w.is_running] == [
            "refresh_fleet_forever"]

        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, JobsScreen) and app.job_open is None
        assert app.settings.prometheus.job == ""

        await pilot.press("up", "enter")
        while not isinstance(app.screen, JobConsoleScreen):
            await pilot.pause(0.05)
        assert opened[-1] == "job-0002"
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, JobsScreen) and app.is_running


async def test_slash_filters_the_rows():
    app, _backend, _opened = _app(jobs=12)
    async with app.run_test(size=(120, 30)) as pilot:
        while not app.jobs.snapshot.rows:
            await pilot.pause(0.05)
        await pilot.pause()
        assert len(_names(app)) == 12
        await pilot.press("slash", *"0011", "enter")
        await pilot.pause()
        assert _names(app) == ["job-0011"]
        assert "filter: 0011 (1 shown)" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert len(_names(app)) == 12


async def test_the_palette_opens_a_job_by_its_name():
    app, _backend, opened = _app(jobs=6)
    async with app.run_test(size=(120, 30)) as pilot:
        while not app.jobs.snapshot.rows:
            await pilot.pause(0.05)
        await pilot.press("ctrl+p", *"job-0004")
        await pilot.pause(0.5)
        await pilot.press("enter")
        while not isinstance(app.screen, JobConsoleScreen):
            await pilot.pause(0.05)
        assert opened == ["job-0004"]


def _demo_app(at: float, log_root, opens: bool = True):
    """The demo as ``ranktop --demo`` runs it: its job's console (with its logs) over its
    fleet's list."""
    clock = FakeClock(START + at)
    settings = load_settings(environ={})
    demo = DemoFleet(settings.demo, START, clock)
    opened: list[int] = []

    def demo_job(opening: int):
        opened.append(opening)
        return demo_source(settings.demo, clock, started=START, log_root=log_root)

    return demo_fleet_app(settings, demo, demo_job, clock=clock, opens=opens), opened


async def _console_of(app, pilot) -> None:
    while not isinstance(app.screen, JobConsoleScreen):
        await pilot.pause(0.05)
    await app.poll_once()
    await pilot.pause()


async def test_the_demo_opens_on_its_job_and_q_leads_to_its_fleet(tmp_path):
    app, opened = _demo_app(at=20.0, log_root=tmp_path)
    async with app.run_test(size=(140, 36)) as pilot:
        await _console_of(app, pilot)
        assert opened == [0] and app.job_open == "llama-70b-pretrain"
        assert "llama-70b-pretrain" in screen_text(app)
        await pilot.press("q")
        while not app.jobs.snapshot.rows or not isinstance(app.screen, JobsScreen):
            await pilot.pause(0.05)
        await pilot.pause()
        names = _names(app)
        assert names[:2] == ["rlhf-stalled", "pretrain-dead-rank"] and len(names) == 5
        assert "5 jobs, 3 unhealthy" in screen_text(app)  # the demo job runs hot
        await pilot.press("enter")  # the stalled job's own console
        await _console_of(app, pilot)
        assert app.job_open == "rlhf-stalled" and "rlhf-stalled" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, JobsScreen)
        await pilot.press("down", "down", "enter")  # the demo's job again: its logs afresh
        await _console_of(app, pilot)
        assert opened == [0, 1] and app.job_open == "llama-70b-pretrain"


async def test_the_advice_on_a_shared_node_leads_to_the_other_jobs_row(tmp_path):
    app, _opened = _demo_app(at=140.0, log_root=tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await _console_of(app, pilot)
        for at in range(150, 201, 10):  # rank 455 on gpu-node-056: XID 79 at 170 s
            app.clock.now = START + at
            await app.poll_once()
            await asyncio.to_thread(app.engine.source.flush_logs)  # its CUDA error, read
            if app.engine.pipeline.triage is not None:
                await asyncio.to_thread(app.engine.pipeline.triage.wait, 30.0)
            await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        assert "also on gpu-node-056: job eval-sweep-7" in screen_text(app)
        await pilot.press("enter")
        while not isinstance(app.screen, JobsScreen):
            await pilot.pause(0.05)
        while app.jobs.selected_job() != "eval-sweep-7":
            await pilot.pause(0.05)
        assert "gpu-node-056: llama-70b-pretrain" in screen_text(app)
