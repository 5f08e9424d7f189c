"""The header's health: a poll overdue says LATE over good data, never over a source that
is already stale or down, whose reason stays on screen."""

from __future__ import annotations

from ranktop.tui.core.model import Health, SourceStatus
from ranktop.tui.screens.cluster_lines import JobView, header
from rich.style import Style


def view(status: SourceStatus, polling_since: float | None) -> JobView:
    return JobView("job", status, None, 8, 8, now=100.0, paused=False, pause_key="p",
                   step_stuck_since=None, polling_since=polling_since, refresh_seconds=2.0)


def plain(view: JobView) -> str:
    return header(view, lambda role: Style()).plain


def test_a_poll_overdue_over_good_data_is_late() -> None:
    ok = SourceStatus("prometheus", Health.OK, since=0.0)
    assert "LATE: no answer for" in plain(view(ok, polling_since=95.0))
    assert "LATE" not in plain(view(ok, polling_since=99.0))  # within the refresh


def test_a_stale_source_keeps_its_reason_while_the_next_poll_is_late() -> None:
    stale = SourceStatus("prometheus", Health.STALE, since=55.0, message="connection refused")
    text = plain(view(stale, polling_since=90.0))
    assert "STALE for 45.0 s: connection refused" in text
    assert "LATE" not in text
