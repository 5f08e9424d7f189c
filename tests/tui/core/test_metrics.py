"""Formatting values, summaries, and the auto scale of step and compute time."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.core.metrics import (
    ScaleTracker,
    format_value,
    present_median,
    summarise,
    throttle_names,
)
from ranktop.tui.settings.config import load_settings

from tests.tui.properties import FEW

METRICS = load_settings().metrics


def test_values_read_in_their_units():
    assert format_value(METRICS["sm_active"], 87.4) == "87%"
    assert format_value(METRICS["temperature"], 88.2) == "88°C"
    assert format_value(METRICS["nvlink"], 312.5e9) == "312 GB/s"
    assert format_value(METRICS["nvlink"], 31.25e9) == "31.2 GB/s"
    assert format_value(METRICS["nvlink"], 12.0) == "12 B/s"
    assert format_value(METRICS["memory_used"], 71000) == "69.3 GiB"
    assert format_value(METRICS["step_time"], 1.123) == "1.12 s"
    assert format_value(METRICS["xid"], 79.0) == "79"


def test_no_data_is_never_shown_as_zero():
    for metric in METRICS.values():
        assert format_value(metric, math.nan) == "n/a"


def test_throttle_bits_are_named():
    assert throttle_names(0) == "none"
    assert throttle_names(0x20 | 0x40) == "SW thermal, HW thermal"


def test_summary_skips_missing_values():
    assert summarise([3.0, math.nan, 1.0, 2.0]) == (1.0, 2.0, 3.0)
    assert summarise([math.nan, math.nan]) is None


def test_fixed_scales_come_from_the_config():
    assert ScaleTracker(METRICS["temperature"]).update(60.0) == (50.0, 90.0)


def test_auto_scale_anchors_on_the_lowest_recent_median():
    tracker = ScaleTracker(METRICS["step_time"])
    assert tracker.update(math.nan) is None
    low, high = tracker.update(1.0)
    assert (round(low, 3), round(high, 3)) == (0.9, 1.8)
    # the whole job slows down: the scale holds, so every cell turns hot
    assert tracker.update(3.0) == (low, high)


# Any float at all, and the ones a hostile backend sends most.
ANY_FLOAT = st.one_of(st.floats(), st.sampled_from([1e308, -1e308, 3.5e38, -3.5e38, 1e-320,
                                                    math.inf, -math.inf, math.nan]))


@FEW
@given(st.sampled_from(sorted(METRICS)), ANY_FLOAT)
def test_any_value_is_said_in_a_few_characters(metric, value):
    said = format_value(METRICS[metric], value)
    assert isinstance(said, str) and 0 < len(said) <= 40


@FEW
@given(st.lists(ANY_FLOAT, max_size=12))
def test_summaries_and_scales_of_any_values_are_numbers_or_none(values):
    summary = summarise(values)
    assert summary is None or all(not math.isnan(v) for v in summary)
    tracker = ScaleTracker(METRICS["step_time"])
    scale = tracker.update(present_median(values))
    assert scale is None or all(math.isfinite(end) for end in scale)
