"""The screen as SVG in the colours its terminal is sent: Textual's own screenshots are always
truecolor, whatever the colour system, so a 16-colour terminal's picture is made here by
passing every colour through the downgrade the app's console makes before it writes. The 16
colours are drawn as Rich's table of them (VGA's), the one its downgrade matches against;
each terminal's theme has its own shades of them."""

from __future__ import annotations

import io

from rich._palettes import STANDARD_PALETTE
from rich.color import ColorSystem
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.terminal_theme import TerminalTheme
from textual.app import App

SYSTEMS = {"standard": ColorSystem.STANDARD, "256": ColorSystem.EIGHT_BIT,
           "truecolor": ColorSystem.TRUECOLOR, "windows": ColorSystem.WINDOWS}
SIXTEEN_THEME = TerminalTheme(STANDARD_PALETTE[0], STANDARD_PALETTE[7],
                              [STANDARD_PALETTE[n] for n in range(8)],
                              [STANDARD_PALETTE[n] for n in range(8, 16)])


def terminal_svg(app: App, title: str | None = None, simplify: bool = False) -> str:
    """``app.export_screenshot``, in the colours of the app's colour system."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False,
                      safe_box=False)
    console.print(app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens, simplify=simplify))
    system = SYSTEMS.get(app.console.color_system or "")
    if system is not None and system is not ColorSystem.TRUECOLOR:
        console._record_buffer[:] = [
            Segment(text, _downgraded(style, system), control)
            for text, style, control in console._record_buffer
        ]
    sixteen = system in (ColorSystem.STANDARD, ColorSystem.WINDOWS)
    return console.export_svg(title=title or app.title,
                              **({"theme": SIXTEEN_THEME} if sixteen else {}))


def _downgraded(style: Style | None, system: ColorSystem) -> Style | None:
    if style is None or (style.color is None and style.bgcolor is None):
        return style
    color = style.color.downgrade(system) if style.color is not None else None
    bgcolor = style.bgcolor.downgrade(system) if style.bgcolor is not None else None
    return style.without_color + Style.from_color(color, bgcolor)
