"""`ranktop` on the command line: flags to Settings, then the console.

Textual reads its colour system when it is imported, so this module imports nothing of
Textual until the flags have been turned into environment variables.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ..app.quit_signals import QUIT_SIGNALS, exit_status
from ..core.moment import use_utc
from ..core.text import plain
from ..settings.config import Settings, load_settings
from ..settings.reader import ConfigError
from . import charset, flags
from .scratch import remove_soon, scratch_folder

if TYPE_CHECKING:
    from ..core.events import EventLog
    from ..engine.client import EngineClient
    from ..sources.base import Source

# An arrow key's bytes come in one write, even over SSH; 50 ms is neovim's ttimeoutlen.
ESC_DELAY_MS = 50
# Terminals that cannot move the cursor or draw a screen (Emacs' shell, some CI runners).
UNDRAWABLE_TERMS = ("dumb",)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``ranktop`` command; any failure of ranktop itself is one line and exit 70."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        from .crash import reader_gone

        return reader_gone()
    except Exception as error:  # the last line of defence: one line, never a traceback
        from .crash import report_crash

        return report_crash(error)


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in flags.SUBCOMMANDS:
        return _subcommand(argv[0], argv[1:])
    args = flags.console_parser().parse_args(argv)
    if os.environ.get("TERM") in UNDRAWABLE_TERMS:
        print(f"ranktop: this terminal (TERM={os.environ['TERM']}) cannot draw the console;"
              " `ranktop report` prints the same verdicts as text (add --json for scripts).",
              file=sys.stderr)
        return 2
    terminal_environment(args.color_system, os.environ)
    ascii = charset.ascii_only(os.environ)
    settings = _settings(args)
    if settings is None:
        return 2
    if args.demo:
        if not _log_dir_usable(args.log_dir):
            return 2
        return run_demo(settings, mouse=not args.no_mouse, demo_start=args.demo_start,
                        log_dir=args.log_dir, ascii_only=ascii, at=args.at)
    if _fleet_wanted(settings, args):
        return run_jobs_list(settings, mouse=not args.no_mouse, ascii_only=ascii)
    if settings.prometheus.url or args.local:
        return run_live(settings, mouse=not args.no_mouse, local=args.local, ascii_only=ascii,
                        at=args.at)
    print("ranktop: no data source given. Run `ranktop --demo` to see the embedded demo "
          "cluster, or `ranktop --prometheus URL --job NAME` for a real one; "
          "`ranktop --help` lists the options.", file=sys.stderr)
    return 2


def terminal_environment(color_system: str | None, environ: MutableMapping[str, str]) -> None:
    """What Textual reads from the environment when it is imported: the colour system the
    user forced, and how long a lone Esc is waited on before it counts as the Esc key (the
    start of an arrow key's bytes otherwise): ESCDELAY, in ms, if the user set it, else
    ESC_DELAY_MS rather than Textual's 100 ms, which every Esc press would wait out."""
    if color_system and color_system != "auto":
        environ["TEXTUAL_COLOR_SYSTEM"] = color_system
    environ.setdefault("ESCDELAY", str(ESC_DELAY_MS))


def _subcommand(name: str, argv: list[str]) -> int:
    if name == "simulate":
        from .simulate import simulate_main

        return simulate_main(argv)
    if name == "init":
        return _init(argv)
    if name == "rules":
        return _rules(argv)
    if name == "jobs":
        return _jobs(argv)
    if name == "open":
        from .open_bundle import open_main

        return open_main(argv)
    return _check_config(argv) if name == "check-config" else _report(argv)


def _settings(args: argparse.Namespace) -> Settings | None:
    """The settings, or None after printing the configuration error."""
    overrides, names = flags.overrides(args)
    try:
        settings = load_settings(args.config, overrides, flag_names=names)
    except ConfigError as error:
        print(f"ranktop: configuration error: {plain(str(error), 1000)}", file=sys.stderr)
        return None
    use_utc(settings.utc)
    return settings


def _check_config(argv: list[str]) -> int:
    args = flags.check_config_parser().parse_args(argv)
    settings = _settings(args)
    if settings is None or not _keys_usable(settings):
        return 2
    if args.toml:
        from .whole_config import whole_config

        sys.stdout.write(whole_config(args.config, flags.overrides(args)[0], os.environ))
        return 0
    from .check_config import check_config

    return check_config(settings, sys.stdout)


def _rules(argv: list[str]) -> int:
    args = flags.rules_parser().parse_args(argv)
    settings = _settings(args)
    if settings is None:
        return 2
    from .rules import print_rules

    return print_rules(settings, sys.stdout, sys.stderr, fleet=args.jobs)


def _jobs(argv: list[str]) -> int:
    args = flags.jobs_parser().parse_args(argv)
    settings = _settings(args)
    if settings is None:
        return 2
    from .jobs import list_jobs

    return list_jobs(settings, sys.stdout, sys.stderr, args.json)


def _init(argv: list[str]) -> int:
    args = flags.init_parser().parse_args(argv)
    from ..settings.paths import user_config_file

    target = args.config.expanduser() if args.config else user_config_file()
    if not target.is_file():
        args.config = None  # a file still to be written is not one to read
    settings = _settings(args)
    if settings is None:
        return 2
    from .init import init_config

    return init_config(settings, target)


def _report(argv: list[str]) -> int:
    args = flags.report_parser().parse_args(argv)
    settings = _settings(args)
    if settings is None or not _log_dir_usable(args.log_dir):
        return 2
    if args.at is not None and args.duration:
        print("ranktop report: --at reports one past moment: it takes no --duration",
              file=sys.stderr)
        return 2
    from ..engine.replay import NothingThen
    from .report import as_json, as_text, collect, collect_at, exit_code

    _exit_on_signals()  # so that the folder below is removed on the way out
    # The demo's ranks write their logs to a throwaway folder, so its hang can be triaged.
    with scratch_folder("ranktop-report-") as folder:
        engine = _report_engine(settings, args, args.log_dir or Path(folder) / "logs")
        if engine is None:
            return 2
        try:
            if args.at is None:
                findings = collect(settings, engine, args.duration)
            else:
                findings = collect_at(settings, engine, args.at)
            if args.bundle is not None and not _report_bundle(settings, engine, findings,
                                                              args.bundle):
                return 2
        except NothingThen as error:
            hint = (f" (the demo began {args.demo_start:g} s before now: --demo-start "
                    "sets how long)") if args.demo else ""
            print(f"ranktop report: {plain(str(error), 500)}{hint}", file=sys.stderr)
            return 2
        finally:
            engine.close()
    print(as_json(findings, settings) if args.json else as_text(findings, settings), end="")
    return exit_code(findings)


def _report_bundle(settings: Settings, engine: EngineClient, findings, folder: Path) -> bool:
    """Write the report's bundle into ``folder`` and say where (on stderr: stdout is the
    report's); False after saying why it could not be written."""
    import asyncio

    from ..bundle.make import Screen, make_bundle
    from ..engine.snapshot import Snapshot
    from .report import as_text

    latest = engine.latest
    snapshot = Snapshot(latest.version, findings.analysis, latest.rank_map_version,
                        error=findings.error, at=findings.at)
    screen = Screen(text=as_text(findings, settings))
    try:
        path = asyncio.run(make_bundle(engine, settings, snapshot, None, screen,
                                       folder.expanduser(), findings))
    except OSError as error:
        print(f"ranktop report: the bundle could not be written in {folder}: "
              f"{error.strerror or error}", file=sys.stderr)
        return False
    print(f"ranktop report: bundle written: {path}", file=sys.stderr)
    return True


def _report_engine(settings: Settings, args: argparse.Namespace,
                   log_root: Path) -> EngineClient | None:
    """The engine a report reads through (``engine/start.py`` chooses which); or None after
    saying why there is none."""
    if args.demo:
        return _engine(settings, partial(_make_demo_source, started=time.time() - args.demo_start,
                                         log_root=log_root), demo=True)
    if not settings.prometheus.url and not args.local:
        print("ranktop report: no data source given (--demo, --prometheus URL or --local)",
              file=sys.stderr)
        return None
    if not _rank_map_readable(settings):
        return None
    return _engine(settings, partial(_make_live_source, local=args.local))


def _engine(settings: Settings, make_source: Callable[[Settings], Source],
            event_log: Path | None = None, demo: bool = False) -> EngineClient | None:
    """The engine ``engine/start.py`` chooses, fed by ``make_source``; or None after saying
    in one line why it could not start."""
    from ..engine.process import EngineFailed
    from ..engine.start import start_engine
    from ..simulator.scenario import ScenarioError
    from ..sources.nvml import NvmlUnavailable

    try:
        return start_engine(settings, make_source, event_log, demo)
    except ScenarioError as error:
        print(f"ranktop: scenario error: {error}", file=sys.stderr)
    except (EngineFailed, NvmlUnavailable) as error:
        print(f"ranktop: {plain(str(error), 500)}", file=sys.stderr)
    return None


def _exit_on_signals() -> None:
    """A report ended by `kill`, a hang-up or ctrl+c exits as a shell expects (128 + the
    signal), through every ``with`` and ``finally`` on the way, and without a traceback."""
    def leave(signum: int, frame: object) -> None:
        raise SystemExit(exit_status(signum))

    for signum in QUIT_SIGNALS:
        signal.signal(signum, leave)


def _log_dir_usable(log_dir: Path | None) -> bool:
    """Whether the demo can write its ranks' logs in ``log_dir``, after saying why not."""
    if log_dir is None:
        return True
    try:
        log_dir.expanduser().mkdir(parents=True, exist_ok=True)
    except OSError as error:
        reason = error.strerror or error.__class__.__name__
        print(f"ranktop: --log-dir: cannot write the demo's logs in {log_dir}: {reason}",
              file=sys.stderr)
        return False
    return True


def run_live(settings: Settings, mouse: bool = True, local: bool = False,
             ascii_only: bool = False, at: float | None = None) -> int:
    """A real job: Prometheus, this node's NVML, or both; ``at``: the past moment the
    console opens at (None: live)."""
    if not _keys_usable(settings) or not _rank_map_readable(settings):
        return 2
    from ..core.events import default_log_path

    engine = _engine(settings, partial(_make_live_source, local=local), default_log_path())
    if engine is None:
        return 2
    return _run_console(settings, engine, mouse, ascii_only, at)


def _fleet_wanted(settings: Settings, args: argparse.Namespace) -> bool:
    """No job named, a backend that holds several: the jobs list opens first."""
    if not settings.prometheus.url or settings.prometheus.job or args.local or args.at:
        return False
    from .fleet_console import holds_several_jobs

    return holds_several_jobs(settings)


def run_jobs_list(settings: Settings, mouse: bool = True, ascii_only: bool = False) -> int:
    """The jobs list, each job's console in its own engine once opened."""
    if not _keys_usable(settings) or not _rank_map_readable(settings):
        return 2
    from ..core.events import default_log_path
    from ..engine.threaded import ThreadEngine
    from .fleet_console import run_fleet

    def open_engine(job: Settings) -> EngineClient | None:
        return _engine(job, partial(_make_live_source, local=False), default_log_path())

    def idle_engine(fleet: Settings) -> EngineClient:
        return ThreadEngine(fleet, _make_live_source(fleet, local=False))

    return run_fleet(settings, open_engine, _run_app, mouse, ascii_only, idle_engine)


def _run_console(settings: Settings, engine: EngineClient, mouse: bool, ascii_only: bool,
                 at: float | None = None,
                 cleanups: Sequence[Callable[[], None]] = ()) -> int:
    """The console on ``engine``, closed when it ends (``cleanups`` run after it)."""
    from ..app.console import RanktopApp

    app = RanktopApp(settings, engine=engine, ascii_only=ascii_only, at=at)
    app.cleanups += [engine.close, *cleanups]
    try:
        return _run_app(app, mouse)
    finally:
        engine.close()


def _run_app(app, mouse: bool) -> int:
    """Run the console; its exit status when the user (or a signal) ended it, else the crash
    said in one line."""
    app.ends_process = True
    app.run(mouse=mouse)
    if app.crash is not None:
        from .crash import report_crash

        return report_crash(app.crash)
    return app.return_code or 0


def _make_demo_source(settings: Settings, started: float, log_root: Path) -> Source:
    """The demo's source, made in the engine's process."""
    from ..sources.demo import demo_source

    return demo_source(settings.demo, started=started, log_root=log_root)


def _make_live_source(settings: Settings, local: bool) -> Source:
    """The source for a real job (NvmlUnavailable when --local cannot be had)."""
    from ..sources.prometheus.source import PrometheusSource

    prometheus = PrometheusSource(settings) if settings.prometheus.url else None
    if not local:
        return prometheus
    from ..sources.merged import MergedSource
    from ..sources.nvml import NvmlSource, NvmlUnavailable

    try:
        nvml = NvmlSource()
    except NvmlUnavailable as error:
        raise NvmlUnavailable(f"--local: {error}") from None
    return MergedSource(prometheus, nvml) if prometheus is not None else nvml


def _rank_map_readable(settings: Settings) -> bool:
    """A rank-map file that cannot be used is a configuration error, said at start."""
    if settings.ranks.rank_map_file is None:
        return True
    from ..core.ranks import RankMapError, from_file

    try:
        from_file(settings.ranks.rank_map_file)
    except RankMapError as error:
        print(f"ranktop: configuration error: {error}", file=sys.stderr)
        return False
    return True


def _keys_usable(settings: Settings) -> bool:
    """Whether the user's ``[keys]`` fit the console's bindings, after saying why not. Textual
    is imported here: call it once the colour system is settled."""
    from ..app.keymap import check_keymap

    try:
        check_keymap(settings.keymap, str(settings.config_file))
    except ConfigError as error:
        print(f"ranktop: configuration error: {error}", file=sys.stderr)
        return False
    return True


def _run_demo_fleet(settings: Settings, started: float, log_root: Path, folder: Path,
                    log: EventLog, mouse: bool, ascii_only: bool) -> int:
    """The demo's job over the jobs list of its fleet; each opening of the demo's job
    writes its ranks' logs afresh (the first in ``log_root``, the next in ``folder``)."""
    from ..sources.demo import DemoSource, demo_source
    from .fleet_console import run_demo_fleet

    opened: list[DemoSource] = []

    def make_source(opening: int) -> DemoSource:
        logs = log_root if opening == 0 else folder / f"logs-{opening}"
        opened.append(demo_source(settings.demo, started=started, log_root=logs))
        return opened[-1]

    def close_all() -> None:
        for source in opened:
            source.close()

    try:
        return run_demo_fleet(settings, make_source, log, started, _run_app, mouse, ascii_only,
                              [close_all, partial(remove_soon, str(folder))])
    finally:
        close_all()


def run_demo(settings: Settings, mouse: bool = True, demo_start: float = 0.0,
             log_dir: Path | None = None, ascii_only: bool = False,
             at: float | None = None) -> int:
    from ..core.events import EventLog
    from ..engine.start import runs_apart
    from ..settings.layout import with_job_parallelism
    from ..simulator.scenario import ScenarioError, load_scenario

    if not _keys_usable(settings):
        return 2
    try:
        load_scenario()
    except ScenarioError as error:
        print(f"ranktop: scenario error: {error}", file=sys.stderr)
        return 2
    settings = replace(settings, layout=with_job_parallelism(settings.layout,
                                                             settings.demo.parallelism))
    # The demo's anomalies are not the user's history: they go to a throwaway log, and its
    # ranks' log files to a throwaway folder unless --log-dir names one.
    with scratch_folder("ranktop-demo-") as folder:
        started = time.time() - demo_start
        log_root = log_dir.expanduser() if log_dir else Path(folder) / "logs"
        if at is None and not runs_apart(settings, demo=True):
            # live, the demo's fleet: its job's console over the list, as a backend of
            # several jobs opens
            log = EventLog(Path(folder) / "events.jsonl")
            return _run_demo_fleet(settings, started, log_root, Path(folder), log, mouse,
                                   ascii_only)
        engine = _engine(settings, partial(_make_demo_source, started=started,
                                           log_root=log_root),
                         Path(folder) / "events.jsonl", demo=True)
        if engine is None:
            return 2
        return _run_console(settings, engine, mouse, ascii_only, at,
                            [partial(remove_soon, folder)])

