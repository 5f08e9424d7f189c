"""Whether the locale can show more than ASCII."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from ranktop.tui.cli.charset import ascii_only


@pytest.mark.parametrize("environ", [
    {"LANG": "en_US.UTF-8"},
    {"LANG": "C.utf8"},
    {"LC_CTYPE": "de_DE.UTF-8@euro", "LANG": "C"},
    {"LC_ALL": "en_GB.UTF-8", "LANG": "C"},
    {"LC_ALL": "", "LC_CTYPE": "", "LANG": "fr_FR.utf-8"},
])
def test_a_utf8_locale_keeps_unicode(environ):
    assert not ascii_only(environ)


@pytest.mark.parametrize("environ", [
    {},
    {"LANG": "C"},
    {"LC_ALL": "POSIX", "LANG": "en_US.UTF-8"},
    {"LC_CTYPE": "C", "LANG": "en_US.UTF-8"},
    {"LANG": "en_US.ISO-8859-1"},
    {"LANG": "en_US"},
])
def test_a_locale_without_utf8_draws_ascii(environ):
    assert ascii_only(environ)


@pytest.mark.parametrize(("lang", "drawn_ascii"), [("C", True), ("en_US.UTF-8", False)])
def test_the_console_is_told_at_start_whether_to_draw_ascii(monkeypatch, lang, drawn_ascii):
    from ranktop.tui.cli import main

    told = {}
    monkeypatch.setattr(main, "run_demo", lambda settings, **options: told.update(options) or 0)
    for name in ("LC_ALL", "LC_CTYPE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", lang)
    assert main.main(["--demo"]) == 0
    assert told["ascii_only"] is drawn_ascii


@pytest.mark.parametrize("lang,ascii", [("C", True), ("", True), ("en_US.UTF-8", False)])
def test_the_locale_python_coerced_at_start_up_is_read_as_it_was_given(lang, ascii) -> None:
    # Python sets LC_CTYPE=C.UTF-8 in its own environment over a C locale (PEP 538): the
    # console must still see the C locale it was started in.
    env = {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_CTYPE", "LANG")}
    if lang:
        env["LANG"] = lang
    asked = subprocess.run(
        [sys.executable, "-c", "import os; from ranktop.tui.cli.charset import ascii_only;"
                               " print(ascii_only(os.environ))"],
        env=env, capture_output=True, text=True, check=True)
    assert asked.stdout.strip() == str(ascii)
