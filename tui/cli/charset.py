"""Whether the terminal's locale can show more than ASCII, read as the C library reads it."""

from __future__ import annotations

from collections.abc import Mapping

# The locale variables that name the character set, the one that wins first.
CHARSET_VARIABLES = ("LC_ALL", "LC_CTYPE", "LANG")
UTF8_NAMES = ("utf-8", "utf8")
COERCED = "C.UTF-8"  # Python's own LC_CTYPE over a C locale


def locale_name(environ: Mapping[str, str]) -> str:
    """The locale that decides the character set: the first of LC_ALL, LC_CTYPE and LANG
    that is set and not empty, else "C" (the C library's default)."""
    if not environ.get("LC_ALL") and environ.get("LC_CTYPE") == COERCED:
        # Python puts this here itself at start-up when the locale was C (PEP 538): the
        # terminal was given LANG's, or none.
        return environ.get("LANG") or "C"
    return next((environ[name] for name in CHARSET_VARIABLES if environ.get(name)), "C")


def ascii_only(environ: Mapping[str, str]) -> bool:
    """Whether the console must draw with ASCII only: its locale's charset is not UTF-8
    ("C", "POSIX", "en_US.ISO-8859-1"); "en_US.UTF-8" and "C.utf8" can show Unicode."""
    name = locale_name(environ)
    charset = name.partition(".")[2].partition("@")[0]
    return charset.lower() not in UTF8_NAMES
