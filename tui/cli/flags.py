"""The flags of `ranktop` and of its subcommands: which each command takes, how each value is
checked, and which setting each one overrides.

A command is given only the flags it honours, so a flag it would ignore is refused rather
than silently dropped. A bad value is one line naming the flag, and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..core.moment import MomentError, parse_moment
from ..settings.paths import version

COLOR_SYSTEMS = ("auto", "standard", "256", "truecolor")

# Every subcommand, as `ranktop --help` lists it (main.py dispatches on the same names).
SUBCOMMANDS = {
    "report": "poll for a while, then print what is wrong (--json for scripts); exit 0 "
              "when healthy, 1 when anomalies are active",
    "check-config": "print the resolved configuration, check the connection and run every "
                    "query",
    "init": "find the job's metrics, show the config that reads them and write it to the "
            "config file (merged into one that exists, kept first as .bak)",
    "rules": "print Prometheus recording rules that join DCGM's series to the job's ranks "
             "(ranktop reads the recorded series when Prometheus has them)",
    "jobs": "list every job the backend holds, worst first (--json for scripts); exit 0 "
            "when all are healthy, 1 when any is not",
    "open": "reopen an incident's bundle (written by the B key or `report --bundle`), "
            "offline",
    "simulate": "serve the demo cluster as dcgm-exporter and job metrics for a Prometheus "
                "to scrape",
}

JOB_HELP = ("the training job: the value of the job label its metrics carry ([ranks] "
            "job_label; check-config and init find it); RANKTOP_JOB")

# flag -> (table, key): what each flag overrides, and how errors name it
FLAG_KEYS = {
    "nodes": ("demo", "nodes"), "gpus_per_node": ("demo", "gpus_per_node"),
    "seed": ("demo", "seed"), "refresh": ("display", "refresh_seconds"),
    "prometheus": ("prometheus", "url"), "job": ("prometheus", "job"),
    "insecure": ("prometheus", "insecure"), "rank_map": ("ranks", "rank_map_file"),
    "logs": ("logs", "spec"), "flight_recorder": ("logs", "flight_recorder"),
    "alertmanager": ("alertmanager", "url"), "utc": ("display", "utc"),
}


class Parser(argparse.ArgumentParser):
    """argparse whose errors are one line (no usage block) and exit with status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        parsed = super().parse_args(_joined_ago(sys.argv[1:] if args is None else args),
                                    namespace)
        if getattr(parsed, "demo", False):
            real = [flag for flag, given in (("--prometheus", getattr(parsed, "prometheus", None)),
                                             ("--local", getattr(parsed, "local", False)))
                    if given]
            if real:  # never silently show the demo to someone who asked for their cluster
                self.error(f"--demo is a simulated cluster of its own: it cannot be combined"
                           f" with {' or '.join(real)}")
        return parsed


def _joined_ago(args: Sequence[str]) -> list[str]:
    """``--at -15m`` as ``--at=-15m``: argparse would take a value that starts with a dash
    for a flag of its own."""
    joined: list[str] = []
    for arg in args:
        if joined and joined[-1] == "--at" and arg.startswith("-") and arg[1:2].isdigit():
            joined[-1] = f"--at={arg}"
        else:
            joined.append(arg)
    return joined


def number(kind: type, low: float, high: float, rule: str) -> Callable[[str], float]:
    """An argparse type: a number of ``kind`` from ``low`` to ``high`` (NaN and infinity
    never are), else an error that says ``rule``."""
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            value = float("nan")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be {rule} (got {text!r})")
        return value
    return parse


POSITIVE = number(int, 1, float("inf"), "a whole number, at least 1")
REFRESH = number(float, 0.2, 3600, "a number of seconds from 0.2 to 3600")


class _VersionAction(argparse.Action):
    """--version: prints ranktop's version and exits."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default,
                         help=help or "show the version and exit")

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"ranktop {version()}")  # on stdout, as argparse's own version action
        parser.exit()


def console_parser() -> Parser:
    """`ranktop`: the console."""
    listed = "\n".join(f"  ranktop {name:<13} {what}" for name, what in SUBCOMMANDS.items())
    parser = Parser(
        prog="ranktop", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A live console of every rank of a distributed GPU training job.",
        epilog=f"subcommands (each has its own --help):\n{listed}\n\n"
               "Try it on the embedded demo cluster: ranktop --demo",
    )
    parser.add_argument("--version", action=_VersionAction)
    _source_flags(parser, alertmanager=True)
    _demo_flags(parser)
    _watch_flags(parser)
    parser.add_argument("--color-system", choices=COLOR_SYSTEMS,
                        help="force the colour system (inside tmux over SSH, 256 is typical)")
    parser.add_argument("--no-mouse", action="store_true",
                        help="leave the mouse to tmux (selection, scrollback)")
    return parser


def report_parser() -> Parser:
    """`ranktop report`: the console's analysis, printed."""
    parser = Parser(
        prog="ranktop report",
        description="Poll for --duration seconds (default: one poll) and print what is "
                    "wrong: exit 0 when healthy, 1 when anomalies are active, 2 on a usage "
                    "or configuration error.")
    _source_flags(parser, alertmanager=False)
    _demo_flags(parser)
    _watch_flags(parser)
    parser.add_argument("--duration", type=number(float, 0, 86400, "a number of seconds "
                                                  "from 0 to 86400"),
                        default=0.0, metavar="SECONDS",
                        help="keep polling this long before reporting (default 0: one poll)")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    parser.add_argument("--bundle", type=Path, metavar="DIR",
                        help="also write the incident's bundle (<job>-<UTC time>.ranktop) "
                             "into DIR, to hand over; `ranktop open` reopens it")
    return parser


def jobs_parser() -> Parser:
    """`ranktop jobs`: every job the backend holds, worst first."""
    parser = Parser(
        prog="ranktop jobs",
        description="List every job the backend holds (by the job label of its step metric), "
                    "worst first: stalled, ranks missing, critical alerts, then by goodput. "
                    "Exit 0 when every job is healthy, 1 when any is not or the list cannot "
                    "be read, 2 on a usage or configuration error.")
    parser.add_argument("--prometheus", metavar="URL",
                        help="the Prometheus (or any PromQL API) to read; "
                             "RANKTOP_PROMETHEUS_URL")
    parser.add_argument("--insecure", action="store_true", default=None,
                        help="do not verify the server's TLS certificate")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    _config_flag(parser)
    return parser


def open_parser() -> Parser:
    """`ranktop open`: a bundle's console, offline."""
    parser = Parser(
        prog="ranktop open",
        description="Reopen the console on an incident's bundle (a .ranktop folder or "
                    ".ranktop.tar.gz): the same screens and verdicts, read-only, offline. "
                    "With --prometheus, the keys that step through time ask that backend "
                    "for the moments around the bundle's.")
    parser.add_argument("bundle", type=Path, metavar="BUNDLE", help="the bundle to open")
    parser.add_argument("--prometheus", metavar="URL",
                        help="the job's backend, for the moments before and after the "
                             "bundle's (its credentials from your config or RANKTOP_*)")
    parser.add_argument("--job", metavar="NAME",
                        help="the job's name in that backend (default: the bundle's)")
    _config_flag(parser)
    _utc_flag(parser)
    parser.add_argument("--color-system", choices=COLOR_SYSTEMS,
                        help="force the colour system (inside tmux over SSH, 256 is typical)")
    parser.add_argument("--no-mouse", action="store_true",
                        help="leave the mouse to tmux (selection, scrollback)")
    return parser


def check_config_parser() -> Parser:
    """`ranktop check-config`: what the console would read from Prometheus, checked."""
    parser = Parser(
        prog="ranktop check-config",
        description="Print the resolved configuration (secrets hidden), check the "
                    "connection and run every query, saying how many ranks each returned.")
    _source_flags(parser, alertmanager=True, local=False, demo=False)
    parser.add_argument("--refresh", type=REFRESH, metavar="SECONDS",
                        help="seconds between polls (default 2)")
    _config_flag(parser)
    _utc_flag(parser)
    parser.add_argument("--toml", action="store_true",
                        help="only print the whole configuration it would use as TOML, a "
                             "file `ranktop --config FILE` reads as it is (no check)")
    return parser


def rules_parser() -> Parser:
    """`ranktop rules`: recording rules for the job's metric names."""
    parser = Parser(
        prog="ranktop rules",
        description="Print Prometheus recording rules (YAML, for a rule_files entry) that "
                    "join DCGM's series to the job's ranks by GPU inside Prometheus; "
                    "ranktop then reads one recorded series per rank.")
    parser.add_argument("--job", metavar="NAME",
                        help=f"{JOB_HELP} (without one, the rules match every job's series)")
    parser.add_argument("--jobs", action="store_true",
                        help="the rules of the jobs list instead: every job's figures "
                             "recorded once per job (ranktop jobs reads them when present)")
    _config_flag(parser)
    return parser


def init_parser() -> Parser:
    """`ranktop init`: the config that reads the job's own metrics, written once."""
    parser = Parser(
        prog="ranktop init",
        description="Find the job's metrics in the Prometheus given, show the config that "
                    "reads them (with --logs and --flight-recorder), and write it to the "
                    "config file (--config FILE, else ~/.config/ranktop/config.toml); a file "
                    "that exists is merged with it, what it held kept in FILE.bak first.")
    _source_flags(parser, alertmanager=False, local=False, demo=False)
    _config_flag(parser)
    return parser


def _source_flags(parser: Parser, *, alertmanager: bool, local: bool = True,
                  demo: bool = True) -> None:
    add = parser.add_argument
    if demo:
        add("--demo", action="store_true",
            help="the embedded simulated cluster, with its scripted faults")
    if local:
        add("--local", action="store_true",
            help="this node's GPUs through NVML; with --prometheus, they take NVML's "
                 "fresher values")
    add("--prometheus", metavar="URL",
        help="the Prometheus (or any PromQL API) to read; RANKTOP_PROMETHEUS_URL")
    add("--job", metavar="NAME",
        help=JOB_HELP)
    add("--rank-map", metavar="FILE",
        help="lines of rank,host,gpu, when the job's metrics carry no ranks")
    add("--logs", metavar="SPEC",
        help="each rank's log files: a pattern with {rank} {local_rank} {host} {node_rank} "
             "{node} {pod}, or torchrun:DIR, nccl:PATTERN, slurm:PATTERN")
    add("--flight-recorder", metavar="PATTERN",
        help="each rank's PyTorch Flight Recorder dump: a pattern with {rank} and globs, "
             "a folder (PyTorch's file names), or the TORCH_FR_DUMP_TEMP_FILE prefix")
    if alertmanager:
        add("--alertmanager", metavar="URL",
            help="Alertmanager, for the rank screen's alert history")
    add("--insecure", action="store_true", default=None,
        help="do not verify the server's TLS certificate")


def _demo_flags(parser: Parser) -> None:
    add = parser.add_argument
    add("--nodes", type=POSITIVE, help="demo: number of nodes (default 64)")
    add("--gpus-per-node", type=POSITIVE, help="demo: GPUs per node (default 8)")
    add("--seed", type=int, help="demo: random seed (same seed, same cluster)")
    add("--demo-start", type=number(float, 0, 1e9, "a number of seconds, at least 0"),
        default=0.0, metavar="SECONDS", help="demo: begin this far into the fault scenario")
    add("--log-dir", type=Path, metavar="DIR",
        help="demo: write the simulated ranks' logs here (default: a temporary folder, "
             "removed at exit)")


def past_moment(text: str) -> float:
    """``--at``'s value as epoch seconds, read now in the local time zone."""
    try:
        return parse_moment(text, time.time())
    except MomentError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _watch_flags(parser: Parser) -> None:
    """The flags of the commands that watch the job: the console and report."""
    parser.add_argument("--at", type=past_moment, metavar="TIME",
                        help="the job as it was at TIME, from the backend's history: "
                             "2026-11-24T03:12:40Z, 03:12 (local time), -15m, a Unix time")
    parser.add_argument("--refresh", type=REFRESH, metavar="SECONDS",
                        help="seconds between polls (default 2)")
    _config_flag(parser)
    _utc_flag(parser)


def _config_flag(parser: Parser) -> None:
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="config file (default ~/.config/ranktop/config.toml)")


def _utc_flag(parser: Parser) -> None:
    parser.add_argument("--utc", action="store_true", default=None,
                        help="say every time in UTC (default: the local time zone)")


def overrides(args: argparse.Namespace) -> tuple[dict, dict[str, str]]:
    """The settings the flags override, by table, and each setting's flag (for errors)."""
    found: dict[str, dict] = {}
    names: dict[str, str] = {}
    for attribute, (table, key) in FLAG_KEYS.items():
        value = getattr(args, attribute, None)
        if value is not None:
            found.setdefault(table, {})[key] = value
            names[f"{table}.{key}"] = f"--{attribute.replace('_', '-')}"
    return found, names
