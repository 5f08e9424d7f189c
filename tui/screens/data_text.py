"""Text from outside, where a screen must hand it over as markup.

Rich and Textual read markup in a plain ``str`` given to many of their APIs: a table's cell,
a tooltip, a notice, the palette's help and highlighted names. Text from outside (a host
label, a log line, a dump's field, an alert, any word of a bundle) is never markup: ``[/]``
in it would crash the screen, ``[@click=app.quit]`` would become a live action. The screens
hand such text over as ``rich.text.Text`` or ``textual.content.Content`` (never parsed) or
with ``markup=False``; where only Textual's markup will do, it goes through ``escaped``.

Textual's own ``escape`` is not enough: it leaves ``[$accent]`` (a variable tag, swallowed)
and doubles a trailing backslash. Its parser reads a backslash before ``[`` as "the bracket
is text" and every other backslash as itself, so one backslash before every ``[`` shows any
text as written."""

from __future__ import annotations

from ..core.text import PLAIN_CHARS, plain


def escaped(text: str, max_chars: int = PLAIN_CHARS) -> str:
    """``text`` as Textual markup that shows it as written, on one line (its control
    characters made visible as the live labels' are)."""
    return plain(text, max_chars).replace("[", "\\[")
