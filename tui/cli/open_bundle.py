"""`ranktop open BUNDLE`: the console on an incident's bundle, offline and read-only.

The bundle's moment stands for live: its header says "BUNDLE OF <time> · not live". With
``--prometheus``, the keys that step through time ask that backend for the moments around
it (the past-moments view); without, they say that a bundle holds one moment."""

from __future__ import annotations

import os
import sys

from ..core.text import plain
from . import charset, flags
from .main import (
    _engine,
    _keys_usable,
    _make_live_source,
    _run_app,
    _settings,
    terminal_environment,
)


def open_main(argv: list[str]) -> int:
    args = flags.open_parser().parse_args(argv)
    from ..bundle.read import read_bundle
    from ..bundle.saved import NotABundle

    try:
        saved = read_bundle(args.bundle.expanduser())
    except NotABundle as error:
        print(f"ranktop open: {plain(str(error), 500)}", file=sys.stderr)
        return 2
    terminal_environment(args.color_system, os.environ)
    backend_url, args.prometheus = args.prometheus, None  # the backend only when asked for
    if backend_url:
        args.prometheus, args.job = backend_url, args.job or saved.job
    settings = _settings(args)
    if settings is None or not _keys_usable(settings):
        return 2
    backend = None
    if backend_url:
        backend = _backend(settings)
        if backend is None:
            return 2
    return _run(settings, saved, backend, mouse=not args.no_mouse)


def _backend(settings):
    """The backend's engine, for the moments around the bundle's (None: said why not)."""
    from functools import partial

    return _engine(settings, partial(_make_live_source, local=False))


def _run(settings, saved, backend, mouse: bool) -> int:
    from ..app.console import RanktopApp
    from ..bundle.opened import BundleEngine

    engine = BundleEngine(saved, backend)
    app = RanktopApp(settings, engine=engine, poll=False, bundle=saved.moment,
                     ascii_only=charset.ascii_only(os.environ))
    if saved.selected is not None:
        app.cluster.cursor = saved.selected
    app.cleanups.append(engine.close)
    try:
        return _run_app(app, mouse)
    finally:
        engine.close()
