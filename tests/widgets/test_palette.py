"""Quantising values into colour levels: direction, clamping, no data, hysteresis."""

from __future__ import annotations

import math

from ranktop.widgets import palette


def test_hot_end_follows_the_bad_direction():
    assert palette.quantise(90, 30, 90, "high") == palette.LEVELS - 1
    assert palette.quantise(30, 30, 90, "high") == 0
    assert palette.quantise(0, 0, 100, "low") == palette.LEVELS - 1  # SM idle is hot
    assert palette.quantise(100, 0, 100, "low") == 0


def test_values_outside_the_scale_clamp_to_its_ends():
    assert palette.quantise(500, 30, 90, "high") == palette.LEVELS - 1
    assert palette.quantise(-5, 30, 90, "high") == 0


def test_nan_is_missing_never_a_scale_level():
    assert palette.quantise(math.nan, 0, 100, "low") == palette.MISSING
    assert palette.MISSING >= palette.LEVELS
    assert palette.glyph(palette.MISSING) not in palette.SCALE_GLYPHS


def test_hysteresis_keeps_a_level_for_noise_around_an_edge():
    edge = 100 / palette.LEVELS  # the edge between levels 0 and 1 on 0..100
    just_over = edge + 0.1
    assert palette.quantise(just_over, 0, 100, "high") == 1
    assert palette.quantise(just_over, 0, 100, "high", previous=0) == 0
    well_over = edge * 1.5
    assert palette.quantise(well_over, 0, 100, "high", previous=0) == 1


def test_a_degenerate_scale_does_not_divide_by_zero():
    assert palette.quantise(5, 3, 3, "high") == 0


def test_styles_are_built_once_and_shared():
    colours = palette.XTERM_256
    assert palette.half_block_style(colours, 1, 2) is palette.half_block_style(colours, 1, 2)


def test_glyphs_grow_denser_towards_the_hot_end():
    density = " ·:░▒▓█"
    ranks = [density.index(palette.glyph(level)) for level in range(palette.LEVELS)]
    assert ranks == sorted(ranks)
    assert ranks[0] < ranks[-1]
