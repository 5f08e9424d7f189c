"""`ranktop` on the command line: flags to Settings, then the console.

Textual reads its colour system when it is imported, so this module imports nothing of
Textual until the flags have been turned into environment variables.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from importlib import metadata
from pathlib import Path

from ranktop.tui.settings.config import Settings, load_settings
from ranktop.tui.settings.reader import ConfigError

COLOR_SYSTEMS = ("auto", "standard", "256", "truecolor")


def _version() -> str:
    try:
        return metadata.version("ranktop")
    except metadata.PackageNotFoundError:
        return "unknown"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0.2 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"must be between 0.2 and 3600 seconds (got {text})")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ranktop",
        description="A live console of every rank of a distributed GPU training job.",
        epilog="Try it on the embedded demo cluster: ranktop --demo. Subcommands: "
               "`ranktop simulate --port P` serves the demo cluster as dcgm-exporter and job "
               "metrics for a Prometheus to scrape; `ranktop check-config` checks the "
               "configuration, the connection and every query.",
    )
    parser.add_argument("--version", action="version", version=f"ranktop {_version()}")
    parser.add_argument("--demo", action="store_true",
                        help="show the embedded simulated cluster, with its scripted faults")
    parser.add_argument("--local", action="store_true",
                        help="this node's GPUs through NVML; with --prometheus, they take "
                             "NVML's fresher values")
    parser.add_argument("--prometheus", metavar="URL",
                        help="the Prometheus (or any PromQL API) to read; RANKTOP_PROMETHEUS_URL")
    parser.add_argument("--job", metavar="NAME",
                        help="the training job, as its metrics' training_job label; RANKTOP_JOB")
    parser.add_argument("--rank-map", metavar="FILE",
                        help="lines of rank,host,gpu, when the job's metrics carry no ranks")
    parser.add_argument("--logs", metavar="SPEC",
                        help="each rank's log files: a pattern with {rank} {local_rank} {host} "
                             "{node_rank}, or torchrun:DIR, nccl:PATTERN, slurm:PATTERN")
    parser.add_argument("--log-dir", metavar="DIR",
                        help="demo: write the simulated ranks' logs here (default: a temp dir)")
    parser.add_argument("--alertmanager", metavar="URL",
                        help="Alertmanager, for the rank screen's alert history")
    parser.add_argument("--insecure", action="store_true", default=None,
                        help="do not verify the server's TLS certificate")
    parser.add_argument("--nodes", type=_positive_int, help="demo: number of nodes (default 64)")
    parser.add_argument("--gpus-per-node", type=_positive_int,
                        help="demo: GPUs per node (default 8)")
    parser.add_argument("--seed", type=int, help="demo: random seed (same seed, same cluster)")
    parser.add_argument("--demo-start", type=float, default=0.0, metavar="SECONDS",
                        help="demo: begin this many seconds into the fault scenario")
    parser.add_argument("--refresh", type=_seconds, metavar="SECONDS",
                        help="seconds between polls (default 2)")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="config file (default ~/.config/ranktop/config.toml)")
    parser.add_argument("--color-system", choices=COLOR_SYSTEMS,
                        help="force the colour system (inside tmux over SSH, 256 is typical)")
    parser.add_argument("--no-mouse", action="store_true",
                        help="leave the mouse to tmux (selection, scrollback)")
    return parser


# flag -> (table, key): what each flag overrides, and how errors name it
FLAG_KEYS = {
    "nodes": ("demo", "nodes"), "gpus_per_node": ("demo", "gpus_per_node"),
    "seed": ("demo", "seed"), "refresh": ("display", "refresh_seconds"),
    "prometheus": ("prometheus", "url"), "job": ("prometheus", "job"),
    "insecure": ("prometheus", "insecure"), "rank_map": ("ranks", "rank_map_file"),
    "logs": ("logs", "spec"), "alertmanager": ("alertmanager", "url"),
}


def _overrides(args: argparse.Namespace) -> tuple[dict, dict[str, str]]:
    overrides: dict[str, dict] = {}
    names: dict[str, str] = {}
    for attribute, (table, key) in FLAG_KEYS.items():
        value = getattr(args, attribute)
        if value is not None:
            overrides.setdefault(table, {})[key] = value
            names[f"{table}.{key}"] = f"--{attribute.replace('_', '-')}"
    return overrides, names


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "simulate":
        from ranktop.tui.simulator.exporter import simulate_main

        return simulate_main(argv[1:])
    if argv and argv[0] == "check-config":
        return _check_config(argv[1:])
    if argv and argv[0] == "report":
        return _report(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.color_system and args.color_system != "auto":
        os.environ["TEXTUAL_COLOR_SYSTEM"] = args.color_system
    settings = _settings(args)
    if settings is None:
        return 2
    if args.demo:
        log_dir = Path(args.log_dir).expanduser() if args.log_dir else None
        return run_demo(settings, mouse=not args.no_mouse, demo_start=args.demo_start,
                        log_dir=log_dir)
    if settings.prometheus.url or args.local:
        return run_live(settings, mouse=not args.no_mouse, local=args.local)
    print("ranktop: no data source given. Run `ranktop --demo` to see the embedded demo "
          "cluster, or `ranktop --prometheus URL --job NAME` for a real one; "
          "`ranktop --help` lists the options.", file=sys.stderr)
    return 2


def _settings(args: argparse.Namespace) -> Settings | None:
    """The settings, or None after printing the configuration error."""
    overrides, names = _overrides(args)
    try:
        return load_settings(args.config, overrides, flag_names=names)
    except ConfigError as error:
        print(f"ranktop: configuration error: {error}", file=sys.stderr)
        return None


def _check_config(argv: list[str]) -> int:
    parser = build_parser()
    parser.prog = "ranktop check-config"
    parser.description = ("Print the resolved configuration (secrets hidden), check the "
                          "connection and run every query, saying how many ranks each returned.")
    settings = _settings(parser.parse_args(argv))
    if settings is None or not _keys_usable(settings):
        return 2
    from ranktop.tui.cli.check_config import check_config

    return check_config(settings, sys.stdout)


def _report(argv: list[str]) -> int:
    parser = build_parser()
    parser.prog = "ranktop report"
    parser.description = ("Poll for --duration seconds (default: one poll) and print what is "
                          "wrong: exit 0 when healthy, 1 when anomalies are active, 2 on a "
                          "usage or configuration error.")
    parser.add_argument("--duration", type=float, default=0.0, metavar="SECONDS",
                        help="keep polling this long before reporting")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    args = parser.parse_args(argv)
    settings = _settings(args)
    if settings is None:
        return 2
    from ranktop.tui.cli.report import as_json, as_text, collect, exit_code

    # The demo's ranks write their logs to a throwaway folder, so its hang can be triaged.
    with tempfile.TemporaryDirectory(prefix="ranktop-report-",
                                     ignore_cleanup_errors=True) as folder:
        source = _report_source(settings, args, Path(folder) / "logs")
        if source is None:
            return 2
        findings = collect(settings, source, max(0.0, args.duration))
    print(as_json(findings, settings) if args.json else as_text(findings, settings), end="")
    return exit_code(findings)


def _report_source(settings: Settings, args: argparse.Namespace, log_root: Path):
    """The source a report reads, or None after saying why there is none."""
    if args.demo:
        from ranktop.tui.simulator.scenario import ScenarioError
        from ranktop.tui.sources.demo import demo_source

        try:
            return demo_source(settings.demo, started=time.time() - args.demo_start,
                               log_root=log_root)
        except ScenarioError as error:
            print(f"ranktop: scenario error: {error}", file=sys.stderr)
            return None
    if settings.prometheus.url and _rank_map_readable(settings):
        from ranktop.tui.sources.prometheus import PrometheusSource

        return PrometheusSource(settings)
    if not settings.prometheus.url:
        print("ranktop report: no data source given (--demo, or --prometheus URL)",
              file=sys.stderr)
    return None


def run_live(settings: Settings, mouse: bool = True, local: bool = False) -> int:
    """A real job: Prometheus, this node's NVML, or both."""
    if not _keys_usable(settings) or not _rank_map_readable(settings):
        return 2
    from ranktop.tui.app import RanktopApp
    from ranktop.tui.core.events import EventLog, default_log_path

    source = _live_source(settings, local)
    if source is None:
        return 2
    log = EventLog(default_log_path())
    app = RanktopApp(settings, source, event_log=log)
    try:
        app.run(mouse=mouse)
    finally:
        close = getattr(getattr(source, "local", source), "close", None)
        if close is not None:
            close()
    return app.return_code or 0


def _live_source(settings: Settings, local: bool):
    """The source for a real job, or None after saying why there is none."""
    from ranktop.tui.sources.prometheus import PrometheusSource

    prometheus = PrometheusSource(settings) if settings.prometheus.url else None
    if not local:
        return prometheus
    from ranktop.tui.sources.merged import MergedSource
    from ranktop.tui.sources.nvml import NvmlSource, NvmlUnavailable

    try:
        nvml = NvmlSource()
    except NvmlUnavailable as error:
        print(f"ranktop: --local: {error}", file=sys.stderr)
        return None
    return MergedSource(prometheus, nvml) if prometheus is not None else nvml


def _rank_map_readable(settings: Settings) -> bool:
    """A rank-map file that cannot be used is a configuration error, said at start."""
    if settings.ranks.rank_map_file is None:
        return True
    from ranktop.tui.core.ranks import RankMapError, from_file

    try:
        from_file(settings.ranks.rank_map_file)
    except RankMapError as error:
        print(f"ranktop: configuration error: {error}", file=sys.stderr)
        return False
    return True


def _keys_usable(settings: Settings) -> bool:
    """Whether the user's ``[keys]`` fit the console's bindings, after saying why not. Textual
    is imported here: call it once the colour system is settled."""
    from ranktop.tui.screens.keymap import check_keymap

    try:
        check_keymap(settings.keymap, str(settings.config_file))
    except ConfigError as error:
        print(f"ranktop: configuration error: {error}", file=sys.stderr)
        return False
    return True


def run_demo(settings: Settings, mouse: bool = True, demo_start: float = 0.0,
             log_dir: Path | None = None) -> int:
    from ranktop.tui.app import RanktopApp
    from ranktop.tui.core.events import EventLog
    from ranktop.tui.simulator.scenario import ScenarioError, load_scenario
    from ranktop.tui.sources.demo import demo_source

    if not _keys_usable(settings):
        return 2
    try:
        load_scenario()
    except ScenarioError as error:
        print(f"ranktop: scenario error: {error}", file=sys.stderr)
        return 2
    # The demo's anomalies are not the user's history: they go to a throwaway log, and its
    # ranks' log files to a throwaway folder unless --log-dir names one.
    with tempfile.TemporaryDirectory(prefix="ranktop-demo-",
                                     ignore_cleanup_errors=True) as folder:
        source = demo_source(settings.demo, started=time.time() - demo_start,
                             log_root=log_dir or Path(folder) / "logs")
        log = EventLog(Path(folder) / "events.jsonl")
        app = RanktopApp(settings, source, event_log=log)
        app.cleanups += [source.close, partial(shutil.rmtree, folder, ignore_errors=True)]
        try:
            app.run(mouse=mouse)
        finally:
            source.close()
    return app.return_code or 0

