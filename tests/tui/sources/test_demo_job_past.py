"""The demo's past of the step counter, for goodput: the values its frames give, without
working the frames out."""

from __future__ import annotations

from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.sources.demo import DemoSource

from tests.tui.conftest import START, FakeClock


def test_the_demos_step_counter_past_is_its_frames_and_none_before_it_began() -> None:
    source = DemoSource(SimCluster(2, 8, 0), FakeClock(START + 400.0), START)
    past = source.job_past(("step",), 3600.0, 20.0, START + 400.0)
    by_frame = source.lookback(("step",), 3600.0, 20.0, until=START + 400.0).job
    assert past == by_frame
    assert [t - START for t, _ in past["step"]] == list(range(0, 400, 20))
    both = source.job_past(("step", "loss"), 100.0, 20.0, START + 400.0)
    assert both == source.lookback(("step", "loss"), 100.0, 20.0, until=START + 400.0).job
