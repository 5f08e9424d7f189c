"""A real bundle, written by ranktop's own writer from the demo's hang, and the same bundle
with the live console's hostile corpus in every free text: what the bundle tests open."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
from ranktop.tui.bundle.make import Screen, make_bundle
from ranktop.tui.cli.report import collect
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source

from tests.faults.proxy import TERMINAL_ESCAPES
from tests.tui.conftest import START, FakeClock

SELECTED = 7  # the demo's dead rank (455) folded into a job of 32 ranks
# The live console's corpus, BEL- and ST-terminated, then markup that must stay text.
ESCAPES = "".join(TERMINAL_ESCAPES.values()) + (
    "\x1b]52;c;b3duZWQ=\x1b\\" "\x1b]0;pwned\x07" "\x1b]8;;https://evil.example\x1b\\x"
    "\x1b]8;;\x1b\\" "\x1b[31m" "\x1bP+q\x1b\\" "\x85\x9f\u2028")
MARKUP = "[/]" "[@click=app.quit]x[/]" "[bold"
HOSTILE = ESCAPES + MARKUP
# Fields whose text a screen looks up rather than shows: left as written.
LOOKED_UP = frozenset({"severity", "health", "kind", "format"})


def real_bundle(folder: Path) -> Path:
    """The demo's 32-rank job polled into its hang, written as a bundle into ``folder``."""
    clock = FakeClock(START + 170.0)
    source = demo_source(DemoSettings(4, 8, seed=7), clock, started=START,
                         log_root=folder / "logs")
    engine = ThreadEngine(load_settings(), source, clock=clock)

    def sleep(seconds: float) -> None:
        clock.now += seconds

    try:
        findings = collect(load_settings(), engine, 24.0, clock=clock, sleep=sleep)
        return asyncio.run(make_bundle(engine, load_settings(), engine.latest, SELECTED,
                                       Screen(), folder, findings))
    finally:
        engine.close()


def hostile(console: bytes) -> bytes:
    """``console`` with ``HOSTILE`` after every text it shows (an empty one, such as what
    a confirmed anomaly awaits, is left empty), and an alert of it on every rank it saved."""
    raw = msgspec.msgpack.decode(console)
    for kept in raw["ranks"].values():
        kept["alerts"] = [[HOSTILE] * 6]
    return msgspec.msgpack.encode(_appended(raw))


def _appended(value: object, name: str = "") -> object:
    if isinstance(value, str):
        return value if name in LOOKED_UP or not value else value + HOSTILE
    if isinstance(value, dict):
        return {key: _appended(each, key if isinstance(key, str) else name)
                for key, each in value.items()}
    if isinstance(value, list):
        return [_appended(each, name) for each in value]
    return value
