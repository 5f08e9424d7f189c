"""A bundle's ``console.msgpack`` made what every screen can take, or refused in one line.

In this order, each step before anything trusts what the last one let through:
1. its shape (``shape``): nesting and list lengths bounded before a byte is decoded;
2. its types (``saved.decoded``): decoded against ranktop's own types only, never code;
3. its values (``schema``): times, ranks, counts and lengths as a screen can take them;
4. its text: every string, keys included, neutralised as the live console's labels are
   (``core.text.plain``: each control character, escape sequences' ESC included, becomes
   "�"), so that nothing of it reaches the terminal as a control. Markup is the screens'
   to escape: the text stays as written, ``[/]`` included."""

from __future__ import annotations

from ..core.text import plain
from .saved import NotABundle, Saved, cleared, decoded
from .schema import TEXT_CHARS, SchemaError, check_saved
from .shape import ShapeError, check_shape


def loaded(data: bytes) -> Saved:
    """The console in ``data``, checked and neutralised; NotABundle saying why not."""
    try:
        check_shape(data)
    except ShapeError as error:
        raise NotABundle(f"its console.msgpack is not shaped as a bundle's: {error}") from None
    try:
        saved = decoded(data)
    except NotABundle:
        raise
    except Exception as error:  # a type's own checks, run while decoding, refused a value
        raise NotABundle(f"its console.msgpack does not hold together "
                         f"({type(error).__name__}: {error})") from None
    try:
        unclean = check_saved(saved)
    except SchemaError as error:
        raise NotABundle(f"its console.msgpack holds what no bundle does: {error}") from None
    return cleared(saved, _neutralised) if unclean else saved


def _neutralised(text: str) -> str:
    return plain(text, TEXT_CHARS)
