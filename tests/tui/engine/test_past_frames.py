"""The frames a replay keeps for stepping: what a kept frame gives back is what was fetched,
its values packed (8 bytes each, not a float object's 32)."""

from __future__ import annotations

import math
from array import array

from ranktop.tui.engine.past_frames import PastFrames
from ranktop.tui.settings.config import DemoSettings
from ranktop.tui.sources.demo import demo_source

from tests.tui.conftest import START, FakeClock


def same(a, b) -> bool:
    return len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y))
                                    for x, y in zip(a, b, strict=True))


def test_a_kept_frame_gives_back_the_values_fetched_packed() -> None:
    clock = FakeClock(START + 200.0)
    frames = PastFrames(demo_source(DemoSettings(8, 8, 7), clock, started=START))
    times = [START + 150.0, START + 152.0]
    fetched = [frame for frame, _ in frames.at(times)]
    kept = [frame for frame, _ in frames.at(times)]  # the second time, from those kept
    assert [f.time for f in kept] == times
    for got, first in zip(kept, fetched, strict=True):
        assert got.values.keys() == first.values.keys() and got.job == first.job
        assert all(isinstance(values, array) for values in got.values.values())
        assert all(same(got.values[m], first.values[m]) for m in first.values)
