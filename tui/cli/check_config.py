"""`ranktop check-config`: the resolved configuration (secrets hidden), the connection, and
every query with how many ranks it returned; the log spec tested against the rank map
(``check_logs``); the Flight Recorder dumps the pattern finds, and how old
(``check_flight``); series a metric's query names that reached no rank, said as a shape
ranktop does not read (``check_shapes``); where the job's metrics or DCGM's are empty, why
(targets down, another job label, a selector that matches nothing) and, for the job's,
the series that look like them with the config lines to use, ready to paste. Exit 0 when
all answered and every rank found a log file (or none is configured), 1 when not.

``[keys]`` and ``[logs]`` have been checked before this runs, by the same code and with the
same messages as when the console starts (the command line exits 2 on either). Its closing
lines point to ``--toml`` (``whole_config``): all of it as one file that loads as it is."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Mapping, Sequence
from typing import TextIO

from ..settings.config import Settings
from ..settings.paths import shipped_config_dir, user_config_file
from ..settings.writer import toml_text
from ..sources.prometheus import promql, suggest
from ..sources.prometheus.backend_kind import TENANT_LABEL, backend_kind, federated_tenants
from ..sources.prometheus.client import QueryError, shown_url
from ..sources.prometheus.diagnosis import shown
from ..sources.prometheus.discovery import ROLES, Discovery
from ..sources.prometheus.ranks import STEP_METRIC
from ..sources.prometheus.source import PrometheusSource
from .check_flight import check_flight
from .check_logs import check_logs, configured_rank_map
from .check_shapes import JOINS, unread_shapes
from .whole_config import USE


def check_config(settings: Settings, out: TextIO) -> int:
    _print_settings(settings, out)
    if not settings.prometheus.url:
        print("\nno Prometheus configured (--prometheus URL or RANKTOP_PROMETHEUS_URL); "
              "nothing to check", file=out)
        rank_map, why = configured_rank_map(settings)
        if settings.log_spec:
            check_logs(settings.log_spec, rank_map, out, why)
        if settings.flight_recorder:
            check_flight(settings.flight_recorder, len(rank_map) if rank_map else None, out)
        print(f"\n{USE}", file=out)
        return 1
    source = PrometheusSource(settings)
    print("\nconnection", file=out)
    try:
        took = _timed(lambda: source.client.query("vector(1)"))
    except QueryError as error:
        print(f"  FAILED: {error}", file=out)
        return 1
    backend = f" ({source.client.backend})" if source.client.backend else ""
    print(f"  ok: {shown_url(settings.prometheus.url)}{backend} answered in "
          f"{took * 1000:.0f} ms", file=out)
    print(f"  backend: {backend_kind(source.client).said()}", file=out)
    if federated_tenants(source.client, settings.ranks.step_metric):
        print(f"  its series carry {TENANT_LABEL} (a federated query over tenants): they are "
              "folded; set [prometheus] tenant to one tenant to keep it apart", file=out)
    return _check_queries(source, settings, out)


def _print_settings(settings: Settings, out: TextIO) -> None:
    prom, ranks = settings.prometheus, settings.ranks
    files = [str(shipped_config_dir() / "default.toml")]
    files.append(str(settings.config_file) if settings.config_file else "no user config file")
    tls = ("NOT verified (--insecure)" if prom.insecure
           else f"verified with {prom.ca_bundle}" if prom.ca_bundle else "verified (system CAs)")
    rows = [
        ("files", ", ".join(files)),
        ("prometheus", f"{shown_url(prom.url) or '(none)'}  timeout {prom.timeout_seconds:g} s, "
                       f"TLS {tls}"),
        ("job", f"{prom.job or '(any)'}  (label {ranks.job_label})"),
        ("auth", _auth(settings)),
        ("dcgm selector", "{" + prom.dcgm_selector + "}"),
        ("backend", _backend(settings)),
        ("rank labels", f"{ranks.step_metric}: {ranks.rank_label}, {ranks.host_label}, "
                        f"{ranks.local_gpu_label}, {ranks.uuid_label}"),
        ("rank map file", str(ranks.rank_map_file or "(none)")),
        ("slurm nodes", ranks.slurm_nodelist or "(none)"),
        ("refresh", f"{settings.refresh_seconds:g} s"),
        ("logs", settings.log_spec or "(none)"),
        ("flight rec.", settings.flight_recorder or "(none)"),
        ("dump pipes", (settings.dump_pipes or "(none)") + (
            ", requests on" if settings.request_dumps else ", requests off")),
        ("alertmanager", settings.alertmanager_url or "(none)"),
        ("keys", ", ".join(f"{k} = {v}" for k, v in settings.keymap.items()) or "(defaults)"),
        ("layout", _layout(settings)),
    ]
    print("configuration", file=out)
    for name, value in rows:
        print(f"  {name:<14} {value}", file=out)


def _layout(settings: Settings) -> str:
    """The parallelism given, as read (the job's size is checked once its ranks are known)."""
    parallelism = settings.layout.parallelism
    if parallelism is None:
        return "by node (no [layout] parallelism)"
    size = "dp from the job's ranks" if parallelism.dp_inferred else f"{parallelism.world} ranks"
    return (f"{parallelism.named} ({size}, order {'-'.join(parallelism.order)}); "
            f"maps start by {settings.layout.view}")


def _backend(settings: Settings) -> str:
    prom = settings.prometheus
    parts = [f"tenant {prom.tenant!r} (X-Scope-OrgID)"] if prom.tenant else []
    if prom.latency_offset:
        parts.append(f"latency_offset {prom.latency_offset} (VictoriaMetrics' newest data)")
    return ", ".join(parts) or "(defaults)"


def _auth(settings: Settings) -> str:
    prom = settings.prometheus
    parts = []
    if prom.bearer_token:
        parts.append("bearer token ***")
    if prom.username:
        parts.append(f"basic auth as {prom.username!r}, password "
                     f"{'***' if prom.password else '(none)'}")
    return "; ".join(parts) or "none"


PROMQL_WIDTH = 96  # a query longer than this is folded onto lines of its own
PROMQL_INDENT = " " * 6


def query_line(key: str, series: int, took: float, expression: str,
               optional: bool = False) -> str:
    """A query's line: "ok" only when it found series; one that ran and found none is
    said to be empty, for that metric then has no data on screen (``optional``: nothing
    needs it). A long query is folded onto indented lines below."""
    shown_query = _folded(expression)
    if series:
        return f"  {key:<24} ok {series:>6} series  {took * 1000:6.0f} ms{shown_query}"
    empty = "empty (optional)" if optional else "EMPTY"
    return (f"  {key:<24} {empty}  no series: not exported, or the selector matches nothing "
            f"({took * 1000:.0f} ms){shown_query}")


def _folded(expression: str) -> str:
    if len(expression) <= PROMQL_WIDTH - 40:
        return f"   {expression}"
    lines = textwrap.wrap(expression, PROMQL_WIDTH, initial_indent=PROMQL_INDENT,
                          subsequent_indent=PROMQL_INDENT + "  ", break_on_hyphens=False)
    return "\n" + "\n".join(lines)


def _required(settings: Settings) -> set[str]:
    """The queries the console cannot do without: the four maps' and the job's step."""
    return {f"metric:{m}" for m in settings.maps} | {f"metric:{STEP_METRIC}"}


def _check_queries(source: PrometheusSource, settings: Settings, out: TextIO) -> int:
    print("\nqueries", file=out)
    failed, missing = 0, []
    required = _required(settings)
    for key, expression in source.queries().items():
        try:
            started = time.perf_counter()
            samples, _ = source.client.query(expression).parted(promql.FRESH_LABEL)
            took = time.perf_counter() - started
        except QueryError as error:
            failed += 1
            missing.append(f"{key} failed")
            print(f"  {key:<24} FAILED  {error}", file=out)
            continue
        if not samples and key in required:
            missing.append(f"{key} empty")
        print(query_line(key, len(samples), took, expression, key not in required), file=out)
    try:
        frame = source.poll_now()
    except QueryError as error:
        print(f"\nranks: could not poll: {error}", file=out)
        print(f"\nnot ready: could not poll ({error})", file=out)
        return 1
    status = source.status()
    print(f"\n{status.detail}", file=out)
    if status.message:
        print(f"  {status.health.value}: {status.message}", file=out)
    for metric, values in frame.values.items():
        count = sum(1 for v in values if v == v)
        print(f"  {metric:<18} {count:>6} of {len(source.rank_map)} ranks", file=out)
    _unread(source, frame.values, out)
    logs_found = check_logs(settings.log_spec, source.rank_map, out)
    check_flight(settings.flight_recorder, len(source.rank_map) or None, out)
    _why(source, out)
    _found(source, out)  # what it prints ends with the lines to paste
    ranks = len(source.rank_map)
    if not ranks:
        missing.append("no rank found")
    if not logs_found:
        missing.append("logs not found for every rank")
    print(f"\n{USE}\n{_verdict(settings, frame.values, ranks, missing)}", file=out)
    return 1 if failed or not ranks or not logs_found else 0


def _verdict(settings: Settings, values: Mapping[str, Sequence[float]], ranks: int,
             missing: Sequence[str]) -> str:
    """One line: ready or not, what the console will have, and what is missing."""
    with_data = sum(1 for m in settings.maps if any(v == v for v in values.get(m, ())))
    logs = "logs configured" if settings.log_spec else "no logs configured (optional)"
    dumps = ("dumps configured" if settings.flight_recorder
             else "no Flight Recorder dumps (optional)")
    said = f"{ranks:,} ranks, {with_data} of {len(settings.maps)} maps with data, {logs}, {dumps}"
    if missing:
        return f"not ready: {said} — missing: {'; '.join(missing)}"
    return f"ready: {said}"


def _unread(source: PrometheusSource, values: Mapping[str, Sequence[float]], out: TextIO
            ) -> None:
    lines = unread_shapes(source.client, source.settings.metrics.values(), values)
    if lines:
        print(f"\nseries in a shape ranktop does not read: {JOINS}", file=out)
        for line in lines:
            print(f"  {line}", file=out)


def _why(source: PrometheusSource, out: TextIO) -> None:
    why = source.finder.why
    if not (why.job or why.dcgm):
        return
    print("\nwhy some queries came back empty", file=out)
    for side, text in (("job metrics", why.job), ("DCGM", why.dcgm)):
        if text:
            print(f"  {side + ':':<14} {text}", file=out)


def _found(source: PrometheusSource, out: TextIO) -> None:
    """What discovery found (when the job's metrics were empty), and the lines to paste."""
    found = source.finder.discovery
    if found.error:
        print(f"\ndiscovery: {found.error}", file=out)
    if not found.candidates:
        return
    print("\ndiscovery: series that look like the job's metrics, best first", file=out)
    for role in ROLES:
        for index, candidate in enumerate(found.of(role.id)):
            title = role.title if index == 0 else ""
            print(f"  {title:<19}{suggest.described(candidate)}", file=out)
    if found.job_label:
        print(f"  {'job':<19}{found.job_label} = {_jobs(found)}", file=out)
    if found.missing:
        print(f"  {'':<19}no series carries the job you named, {shown(found.missing)}",
              file=out)
    table = suggest.suggestion(found, source.configured)
    if not table:
        print("  none is good enough to use: name the job's metrics in [metrics.step_time] "
              "and [ranks] (docs/real-clusters.md: \"Export the job's metrics\")", file=out)
        return
    if source.finder.adopted:
        print("\nthe console uses the unambiguous part of this already, and says so", file=out)
    print(f"\n`ranktop init` merges these lines into {user_config_file()} (what it held kept "
          "in config.toml.bak first); or paste them into it, over its own tables of the same "
          "name:\n", file=out)
    if found.other_jobs or found.missing:
        others = f"; others: {_others(found)}" if found.other_jobs else ""
        print(f"# the job with the most ranks{others}", file=out)
    print(toml_text(table), file=out, end="")


def _jobs(found: Discovery) -> str:
    mark = "" if found.other_jobs else " (the only one)"
    return f"{shown(found.job)}{mark}" + (f"; also {_others(found)}" if found.other_jobs else "")


def _others(found: Discovery) -> str:
    return ", ".join(shown(job) for job in found.other_jobs[:5]) + (
        " …" if len(found.other_jobs) > 5 else "")


def _timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started
