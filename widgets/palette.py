"""Colour scale: the levels of ``ranktop.tui.core.maps.scale``, drawn from a fixed table of styles.

Level 0 is the healthy end of a metric and the last level its bad ("hot") end, whichever
direction is bad. Healthy levels are cool (blue to green), bad ones warm (yellow to red);
"no data" is grey, which no level is, and stale cells have a colour of their own. The
selected cell keeps its colour, with a mark on it.

Each colour system has its table (``colours_for``). With 256 colours or truecolor the colours
are exact xterm-256 entries, so truecolor, 256-colour terminals and tmux's own down-sampling
show the same picture. With 16 colours each is one of the 16 the terminal's theme defines,
given as the triplet Rich matches back to that colour (Textual sends every colour as a
triplet, and Rich picks the nearest of its 16). Without colour (NO_COLOR) each level is a
glyph of increasing density instead.

The styles are pre-built here rather than declared as component classes in the stylesheet like
the widgets' text: a half-block cell shows two levels at once (foreground over background), so
its style is one of a table of level pairs built from the one list of colours, looked up per
cell of a map of up to 16k ranks on every repaint; the legend's swatches read the same table.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from rich._palettes import STANDARD_PALETTE
from rich.color import Color
from rich.style import Style

from ..tui.core.maps.scale import EMPTY, LEVELS, MISSING, STALE, quantise, quantise_all

__all__ = ["EMPTY", "LEVELS", "MISSING", "STALE", "quantise", "quantise_all"]  # re-exported


@dataclass(frozen=True)
class Colours:
    """The colours of one colour system: the scale (healthy first), and the others."""

    name: str
    scale: tuple[Color, ...]
    stale: Color
    missing: Color
    mark_on_dark: Color  # the cursor's mark over a dark cell
    mark_on_light: Color  # ... over a light one


def _xterm(*numbers: int) -> tuple[Color, ...]:
    return tuple(Color.from_ansi(n) for n in numbers)


def _sixteen(*numbers: int) -> tuple[Color, ...]:
    return tuple(Color.from_triplet(STANDARD_PALETTE[n]) for n in numbers)


XTERM_256 = Colours(
    "256",
    # deep blue, blue, teal, green | yellow, amber, orange, red
    scale=_xterm(25, 31, 37, 35, 220, 214, 202, 196),
    stale=Color.from_ansi(60),  # slate
    missing=Color.from_ansi(244),  # grey
    mark_on_dark=Color.from_ansi(231), mark_on_light=Color.from_ansi(16),
)
SIXTEEN = Colours(
    "16",
    # blue, cyan, green, bright green | bright yellow, yellow (brown), red, bright red
    scale=_sixteen(4, 6, 2, 10, 11, 3, 1, 9),
    stale=_sixteen(5)[0],  # magenta
    missing=_sixteen(8)[0],  # bright black: grey
    mark_on_dark=_sixteen(15)[0], mark_on_light=_sixteen(0)[0],
)


def colours_for(color_system: str | None) -> Colours:
    """The table for a console's colour system ("standard", "256", "truecolor", "windows")."""
    return XTERM_256 if color_system in ("256", "truecolor") else SIXTEEN


def without_colour(app: object) -> bool:
    """Whether a Textual app has levels drawn as glyphs: under NO_COLOR, or in a terminal
    without colour."""
    return bool(app.no_color) or app.console.color_system is None  # type: ignore[attr-defined]


SCALE_GLYPHS = (" ", "·", ":", "░", "▒", "▒", "▓", "█")
MISSING_GLYPH = "×"
STALE_GLYPH = "?"
EMPTY_GLYPH = " "

def color_of(colours: Colours, level: int) -> Color | None:
    """The colour of a level, or None for an empty cell."""
    if level < LEVELS:
        return colours.scale[level]
    return {STALE: colours.stale, MISSING: colours.missing}.get(level)


@cache
def half_block_style(colours: Colours, top: int, bottom: int) -> Style:
    """The style of a "▀" character whose top half shows ``top`` and bottom half ``bottom``."""
    return Style.from_color(color_of(colours, top), color_of(colours, bottom))


@cache
def block_style(colours: Colours, level: int) -> Style:
    """The style of a whole-character cell: the level's colour as background."""
    return Style.from_color(None, color_of(colours, level))


@cache
def cursor_style(colours: Colours, level: int) -> Style:
    """The selected cell: its own colour filling the character, under a mark that stands
    out from it (light on dark colours, dark on light ones)."""
    colour = color_of(colours, level)
    light = colour is not None and _luminance(colour) > 0.5
    mark = colours.mark_on_light if light else colours.mark_on_dark
    return Style.from_color(mark, colour) + Style(bold=True)


def _luminance(colour: Color) -> float:
    red, green, blue = colour.get_truecolor()
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


@cache
def glyph(level: int) -> str:
    """The character that stands for a level when there is no colour."""
    if level < LEVELS:
        return SCALE_GLYPHS[level]
    return {STALE: STALE_GLYPH, MISSING: MISSING_GLYPH}.get(level, EMPTY_GLYPH)


CURSOR_GLYPH_STYLE = Style(reverse=True)  # the selected cell without colour: its glyph reversed
