"""`ranktop check-config`: the resolved configuration (secrets hidden), the connection, and
every query with how many ranks it returned; the log spec tested against the rank map
(``check_logs``); the Flight Recorder dumps the pattern finds, and how old
(``check_flight``); series a metric's query names that reached no rank, said as a shape
ranktop does not read (``check_shapes``); where the job's metrics or DCGM's are empty, why
(targets down, another job label, a selector that matches nothing) and, for the job's,
the series that look like them with the config lines to use, ready to paste. Exit 0 when
all answered and every rank found a log file (or none is configured), 1 when not.

``[keys]`` and ``[logs]`` have been checked before this runs, by the same code and with the
same messages as when the console starts (the command line exits 2 on either)."""

from __future__ import annotations

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
from ..sources.prometheus.source import PrometheusSource
from .check_flight import check_flight
from .check_logs import check_logs, configured_rank_map
from .check_shapes import JOINS, unread_shapes


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


def query_line(key: str, series: int, took: float, expression: str) -> str:
    """A query's line: "ok" only when it found series; one that ran and found none is
    said to be empty, for that metric then has no data on screen."""
    if series:
        return f"  {key:<24} ok {series:>6} series  {took * 1000:6.0f} ms   {expression}"
    return (f"  {key:<24} EMPTY  no series: not exported, or the selector matches nothing "
            f"({took * 1000:.0f} ms)   {expression}")


def _check_queries(source: PrometheusSource, settings: Settings, out: TextIO) -> int:
    print("\nqueries", file=out)
    failed = 0
    for key, expression in source.queries().items():
        try:
            started = time.perf_counter()
            samples, _ = source.client.query(expression).parted(promql.FRESH_LABEL)
            took = time.perf_counter() - started
        except QueryError as error:
            failed += 1
            print(f"  {key:<24} FAILED  {error}", file=out)
            continue
        print(query_line(key, len(samples), took, expression), file=out)
    try:
        frame = source.poll_now()
    except QueryError as error:
        print(f"\nranks: could not poll: {error}", file=out)
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
    _found(source, out)  # last: what it prints ends with the lines to paste
    return 1 if failed or not len(source.rank_map) or not logs_found else 0


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
    print(f"\npaste into {user_config_file()} (or run `ranktop init` to write a new one):\n",
          file=out)
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
