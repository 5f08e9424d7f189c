"""SVG snapshots of what users see; `pytest --snapshot-update` after checking the diff."""

from __future__ import annotations

from tests.tui.conftest import make_app


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
