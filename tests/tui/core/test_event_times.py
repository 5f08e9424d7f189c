"""Events as moments: each anomaly's start and a restart's death and resumption, once, on
the refresh grid, the next after or the last before a moment."""

from __future__ import annotations

from ranktop.tui.core.anomaly import Anomaly
from ranktop.tui.core.detect.restarts import Restart
from ranktop.tui.core.event_times import event_times, next_event


def started(kind: str, since: float) -> Anomaly:
    return Anomaly(kind, "critical", 3, kind, since)


def test_each_event_once_oldest_first():
    restart = Restart(3, died=300.0, resumed=340.0, from_step=10, attempt=1, steps_lost=None,
                      gpu_hours_lost=None)
    times = event_times([started("xid", 170.0), started("missing", 172.0),
                         started("pcie", 170.0)], [restart])
    assert times == [170.0, 172.0, 300.0, 340.0]


def test_the_next_and_previous_event_fall_on_the_grid_that_shows_them():
    times = [170.3, 176.0, 210.0]
    assert next_event(times, 170.0, 2.0, 1) == 172.0  # 170.3 shows first at 172
    assert next_event(times, 172.0, 2.0, 1) == 176.0
    assert next_event(times, 176.0, 2.0, -1) == 172.0
    assert next_event(times, 172.0, 2.0, -1) is None
    assert next_event(times, 210.0, 2.0, 1) is None
