"""The colours each colour system's terminal is sent for the scale: healthy levels cool,
bad ones warm, "no data" grey and the only grey, in 16 colours, 256 colours and truecolor."""

from __future__ import annotations

import colorsys

import pytest
from ranktop.widgets import palette
from rich.color import Color, ColorSystem

SYSTEMS = {"standard": ColorSystem.STANDARD, "256": ColorSystem.EIGHT_BIT,
           "truecolor": ColorSystem.TRUECOLOR}
# What the 16 colours are called, by number, whatever shade a terminal's theme gives them.
COOL_16 = {2: "green", 4: "blue", 6: "cyan", 10: "bright green", 12: "bright blue",
           14: "bright cyan"}
WARM_16 = {1: "red", 3: "yellow", 9: "bright red", 11: "bright yellow"}
GREY_16 = {7: "white", 8: "bright black"}
HEALTHY = range(palette.LEVELS // 2)  # the better half of the scale
BAD = range(palette.LEVELS // 2, palette.LEVELS)


def sent(colour: Color, system: ColorSystem) -> Color:
    """The colour a terminal of ``system`` receives for ``colour``: Textual hands Rich a
    triplet, Rich downgrades it to the console's system."""
    return Color.from_triplet(colour.get_truecolor()).downgrade(system)


def hue_and_saturation(colour: Color) -> tuple[float, float]:
    red, green, blue = (c / 255 for c in colour.get_truecolor())
    hue, _, saturation = colorsys.rgb_to_hls(red, green, blue)
    return hue * 360, saturation


def test_sixteen_colours_keep_healthy_cool_bad_warm_and_grey_for_no_data_only():
    colours = palette.colours_for("standard")
    numbers = [sent(c, ColorSystem.STANDARD).number for c in colours.scale]
    assert all(numbers[level] in COOL_16 for level in HEALTHY), numbers
    assert all(numbers[level] in WARM_16 for level in BAD), numbers
    missing = sent(colours.missing, ColorSystem.STANDARD).number
    stale = sent(colours.stale, ColorSystem.STANDARD).number
    assert missing in GREY_16
    assert not set(numbers) & {missing, stale, *GREY_16}
    assert stale != missing


@pytest.mark.parametrize("name", ["256", "truecolor"])
def test_256_colours_and_truecolor_keep_healthy_cool_and_bad_warm(name):
    colours = palette.colours_for(name)
    shown = [sent(c, SYSTEMS[name]) for c in colours.scale]
    for level in HEALTHY:  # green (120) to blue (240), never olive or yellow
        hue, saturation = hue_and_saturation(shown[level])
        assert 100 <= hue <= 240 and saturation > 0.5, (level, shown[level])
    for level in BAD:  # yellow (60) to red (0)
        hue, saturation = hue_and_saturation(shown[level])
        assert hue <= 60 and saturation > 0.5, (level, shown[level])
    for other in (colours.missing, colours.stale):
        assert sent(other, SYSTEMS[name]) not in shown
    assert hue_and_saturation(sent(colours.missing, SYSTEMS[name]))[1] < 0.1  # grey


@pytest.mark.parametrize("colours", [palette.XTERM_256, palette.SIXTEEN])
def test_the_cursor_mark_stands_out_from_every_level(colours):
    for level in (*range(palette.LEVELS), palette.STALE, palette.MISSING):
        style = palette.cursor_style(colours, level)
        assert style.bgcolor == palette.color_of(colours, level)  # the cell keeps its colour
        mark, cell = (palette._luminance(c) for c in (style.color, style.bgcolor))
        assert abs(mark - cell) > 0.4, (level, style)
