"""Which engine a command runs on: one choice for the console, `ranktop report`, the demo, a
job opened from the jobs list and the backend of a reopened bundle.

Where Prometheus is polled the engine runs in a process of its own (``ProcessEngine``): the
UI's process then does no HTTP, decoding or analysis. The demo and a console on NVML alone
run it in threads (``ThreadEngine``). ``RANKTOP_ENGINE=thread`` or ``process`` forces one or
the other, to measure them apart."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ..core.events import EventLog
from ..settings.config import Settings
from ..sources.base import Source
from .client import EngineClient

ENGINE_VARIABLE = "RANKTOP_ENGINE"


def runs_apart(settings: Settings, demo: bool = False,
               environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the engine for ``settings`` runs in a process of its own."""
    forced = environ.get(ENGINE_VARIABLE)
    if forced in ("thread", "process"):
        return forced == "process"
    return bool(settings.prometheus.url) and not demo


def start_engine(settings: Settings, make_source: Callable[[Settings], Source],
                 event_log: Path | None = None, demo: bool = False,
                 environ: Mapping[str, str] = os.environ) -> EngineClient:
    """The engine for ``settings``, fed by the source ``make_source`` makes (in the engine's
    process where it runs apart: it must pickle), journalling to ``event_log``.

    Raises ``process.EngineFailed`` (its one line says why) when an engine apart cannot
    start; in threads, what ``make_source`` raises."""
    if runs_apart(settings, demo, environ):
        from .process import ProcessEngine

        return ProcessEngine(settings, make_source, event_log)
    from .threaded import ThreadEngine

    journal = EventLog(event_log) if event_log is not None else None
    return ThreadEngine(settings, make_source(settings), journal)
