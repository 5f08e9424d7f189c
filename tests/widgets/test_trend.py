"""A trend line draws any values: extreme, infinite or missing ones among them."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st
from ranktop.widgets.trend import _blocks, _range

from tests.tui.properties import FEW

VALUES = st.lists(st.one_of(st.floats(), st.sampled_from([1e308, -1e308, math.inf, -math.inf,
                                                          math.nan, 1e-320])), max_size=30)


@FEW
@given(VALUES)
def test_any_values_draw_one_cell_each(values):
    drawn = _blocks(values, *_range(values))
    assert len(drawn) == len(values)
    assert all((cell == "·") == math.isnan(value) for cell, value in zip(drawn, values,
                                                                         strict=True))


def test_values_far_apart_draw_level_rather_than_fail():
    assert _blocks([-1e308, 1e308], -1e308, 1e308) == _blocks([1.0, 1.0], 1.0, 1.0)
