"""SVG snapshots of what users see; `pytest --snapshot-update` after checking the diff."""

from __future__ import annotations

import os
import time

import pytest

from tests.tui.conftest import START, make_app


async def first_poll(pilot) -> None:
    await pilot.app.poll_once()
    await pilot.pause()


class TestClusterScreen:
    def test_thermal_throttle_and_straggler_at_120x40(self, snap_compare):
        keys = ["slash", *"37", "enter"]
        assert snap_compare(make_app(at=60.0), press=keys, terminal_size=(120, 40),
                            run_before=first_poll)

    def test_aggregated_per_node_at_80x24(self, snap_compare):
        assert snap_compare(make_app(at=60.0), terminal_size=(80, 24), run_before=first_poll)

    def test_one_map_full_size_at_80x24(self, snap_compare):
        assert snap_compare(make_app(at=60.0), press=["2"], terminal_size=(80, 24),
                            run_before=first_poll)

    def test_dead_rank_at_120x40(self, snap_compare):
        keys = ["slash", *"455", "enter"]
        assert snap_compare(make_app(at=200.0), press=keys, terminal_size=(120, 40),
                            run_before=first_poll)


class TestHelpScreen:
    def test_help_lists_the_keys(self, snap_compare):
        assert snap_compare(make_app(), press=["question_mark"], terminal_size=(120, 40),
                            run_before=first_poll)


async def polls_to_200_s(pilot) -> None:
    """Polls up to 200 s: rank 455 died at 172 s, the others hang."""
    for at in range(140, 201, 4):
        pilot.app.clock.now = START + at
        await pilot.app.poll_once()
        await pilot.pause()


class TestColourSystems:
    """The hero picture as each kind of terminal gets it: rank 37 hot, and selected."""

    @pytest.mark.parametrize("system", ["standard", "256", "truecolor"])
    def test_a_throttling_rank_in(self, snap_compare, system):
        app = make_app(at=60.0, color_system=system)
        assert snap_compare(app, press=["slash", *"37", "enter"], terminal_size=(120, 40),
                            run_before=first_poll)

    def test_alarms_without_colour(self, snap_compare, monkeypatch):
        monkeypatch.setenv("NO_COLOR", "1")
        assert snap_compare(make_app(at=200.0), terminal_size=(120, 40),
                            run_before=polls_to_200_s)


@pytest.fixture
def utc_clock():
    """Moments said in UTC, whatever the zone of the machine running the tests."""
    was = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if was is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = was
    time.tzset()


async def back_to_180_s(pilot) -> None:
    """Live to 200 s, then ten refreshes back: 8 s after rank 455 died."""
    await polls_to_200_s(pilot)
    # A step at a time: the maps' levels hold a value near a level's edge where it was
    # (no flicker), so which moments were drawn on the way decides such a cell; keys that a
    # busy machine replays as one would draw fewer of them.
    for _ in range(10):
        await pilot.press("comma")
        await pilot.app.workers.wait_for_complete()  # the replay
        await pilot.pause()


class TestPastMoment:
    """A past moment on screen, unmissable in a 16-colour terminal and without colour."""

    def test_in_16_colours(self, snap_compare, utc_clock):
        app = make_app(at=200.0, color_system="standard")
        assert snap_compare(app, terminal_size=(120, 40), run_before=back_to_180_s)

    def test_without_colour(self, snap_compare, utc_clock, monkeypatch):
        monkeypatch.setenv("NO_COLOR", "1")
        assert snap_compare(make_app(at=200.0), terminal_size=(120, 40),
                            run_before=back_to_180_s)


def demo_fleet(at: float):
    """The demo's fleet on its jobs list, as `ranktop` with no --job opens one."""
    from ranktop.tui.cli.fleet_console import demo_fleet_app
    from ranktop.tui.settings.config import load_settings
    from ranktop.tui.sources.demo import demo_source
    from ranktop.tui.sources.demo_fleet import DemoFleet

    from tests.tui.conftest import FakeClock

    clock = FakeClock(START + at)
    settings = load_settings(environ={})
    return demo_fleet_app(settings, DemoFleet(settings.demo, START, clock),
                          lambda _opening: demo_source(settings.demo, clock, started=START),
                          clock=clock, opens=False)


async def first_refresh(pilot) -> None:
    while not pilot.app.jobs.snapshot.rows:
        await pilot.pause(0.05)
    await pilot.pause()


class TestJobsScreen:
    def test_the_demos_fleet_worst_first_at_120x40(self, snap_compare):
        assert snap_compare(demo_fleet(at=60.0), terminal_size=(120, 40),
                            run_before=first_refresh)
