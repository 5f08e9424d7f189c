"""`ranktop report`: poll for a while, then say what is wrong, in text or JSON, and exit
0 when healthy, 1 when anomalies are confirmed, the job has made no progress for longer
than a stall may last (whatever is still pending), or the report cannot judge (the source
could not be read, only in part, or no rank is up). A server's Retry-After is honoured
between polls. With ``--at`` the report is of a past moment instead, replayed from the
backend's history (``EngineClient.at``): the same verdicts, said to be of that moment and
not live."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import replace

from ..core.advice.incidents import explained_by
from ..core.analysis import Analysis
from ..core.detect.detectors import Anomaly
from ..core.document import document, worst
from ..core.findings import Findings, cannot_judge, exit_code, no_progress
from ..core.metrics import format_value
from ..core.model import RankMap, is_missing
from ..core.moment import shown, shown_full
from ..core.parallelism import for_job
from ..engine.client import EngineClient
from ..engine.replay import NothingThen
from ..settings.config import Settings
from ..settings.paths import version
from ..sources.prometheus.client import QueryError
from .report_actions import actions_lines
from .report_goodput import goodput_line

__all__ = ["Findings", "as_json", "as_text", "collect", "collect_at", "exit_code"]

# How long a report waits, after its last poll, for the hang triage that poll asked for.
TRIAGE_WAIT_SECONDS = 30.0


def collect(settings: Settings, engine: EngineClient, duration: float,
            clock: Callable[[], float] = time.monotonic,
            sleep: Callable[[float], None] = time.sleep) -> Findings:
    """Have ``engine`` poll every refresh interval for ``duration`` seconds (at least once):
    the same engine as the console's."""
    deadline = clock() + duration
    while True:
        snapshot = asyncio.run(engine.poll())
        wait = max(settings.refresh_seconds, snapshot.retry_after)
        if clock() + wait > deadline:
            break
        sleep(wait)
    snapshot = asyncio.run(engine.settle(TRIAGE_WAIT_SECONDS))
    if snapshot.ended is not None:  # paged after the job died: what its series last showed
        try:
            return replace(collect_at(settings, engine, snapshot.ended.at),
                           ended=snapshot.ended)
        except NothingThen:  # the backend holds no frame of it: the live poll is all there is
            pass
    analysis = snapshot.analysis
    active = {a.key for a in analysis.anomalies}
    ended = {a.key: a for a in reversed(analysis.resolved) if a.key not in active}  # newest
    resolved = sorted(ended.values(), key=lambda a: a.order)
    return Findings(engine.job_name, analysis, resolved, snapshot.error,
                    settings.detect.job_stall_seconds, ended=snapshot.ended)


def collect_at(settings: Settings, engine: EngineClient, moment: float) -> Findings:
    """The console as it was at ``moment`` (brought down to the refresh grid), replayed
    from the source's history. Raises NothingThen when the source has nothing then, or
    could not be read (the message says which)."""
    try:
        snapshot = asyncio.run(engine.at(moment))
    except QueryError as error:  # an engine in this process: said as one in its own says it
        raise NothingThen(str(error)) from None
    return Findings(engine.job_name, snapshot.analysis, error=snapshot.error,
                    stall_hold=settings.detect.job_stall_seconds, at=snapshot.at)


def as_json(findings: Findings, settings: Settings) -> str:
    shown = [*settings.maps, settings.step_alternate]
    found = document(findings, settings.metrics, shown, version())
    return json.dumps(found, indent=2, ensure_ascii=False, allow_nan=False)


def as_text(findings: Findings, settings: Settings) -> str:
    frame, rank_map = findings.frame, findings.rank_map
    when = shown(frame.time, dated=True) if frame else "no data"
    if findings.at is not None:
        when = f"at {shown_full(findings.at)}, from the backend's history: not live"
    lines = [f"ranktop report: {findings.job}  {when}"]
    if findings.ended is not None:
        lines.append(f"{findings.ended.said()}: no rank answers now; shown: "
                     f"{_last_moment(findings)} (--at TIME shows earlier moments)")
    lines += [
             f"source: {findings.status.name} ({findings.status.health.value}); "
             f"ranks from {rank_map.source}"]
    if findings.error:
        lines.append(f"could not read the source: {findings.error}")
    elif cannot_judge(findings):
        lines.append(f"cannot judge: {cannot_judge(findings)}")
    if frame is None:
        return "\n".join(lines) + "\n"
    missing = [str(r) for r in findings.analysis.down]
    unknown = len(findings.analysis.unknown)
    lines.append(f"ranks: {findings.analysis.ranks_up}/{len(rank_map)} up"
                 + (f", {unknown} not answered (the backend's answer is partial: not known, "
                    "not down)" if unknown else "")
                 + (f", {len(missing)} missing ({', '.join(missing[:20])})" if missing else ""))
    lines.append("job: " + _job_line(findings.analysis))
    lines.append(goodput_line(findings.analysis.goodput, live=findings.at is None))
    if no_progress(findings):
        lines.append(f"not healthy: {no_progress(findings)}")
    if settings.layout.parallelism is not None:
        fitted, why = for_job(settings.layout.parallelism, len(rank_map))
        lines.append(f"layout: {fitted.describe() if fitted else why}")
    confirmed, pending = findings.analysis.confirmed, findings.analysis.pending
    counts = f"{len(confirmed)} active" + (f", {len(pending)} pending" if pending else "")
    lines += ["", f"anomalies ({counts}):" if findings.active else "anomalies: none active"]
    for incident in findings.analysis.incidents:  # each root, what it explains under it
        lines.append(f"  {_anomaly_line(incident.root, rank_map)}")
        lines += [f"    ↳ {_anomaly_line(a, rank_map)}; explained by: "
                  f"{_named_cause(a, incident.members, rank_map)}" for a in incident.explained]
    lines += actions_lines(findings.analysis.actions)
    if findings.analysis.restarts:
        lines += ["", "restarts in the last hour (resolved):"]
        lines += [f"  {r.summary}" for r in findings.analysis.restarts]
    if findings.resolved:
        lines += ["", "seen during the report, since resolved:"]
        lines += [f"  {_anomaly_line(a, rank_map)}" for a in findings.resolved]
    lines += ["", "worst ranks:"]
    for metric_id in [*settings.maps, settings.step_alternate]:
        if metric_id not in frame.values:
            continue
        metric = settings.metrics[metric_id]
        ranks = ", ".join(f"rank {r} {_where(r, rank_map)} {format_value(metric, v)}"
                          for r, v in worst(frame, metric))
        summary = findings.analysis.summaries.get(metric_id)
        median = f" (median {format_value(metric, summary[1])})" if summary else ""
        lines.append(f"  {metric.title:<16} {ranks or 'no data'}{median}")
    return "\n".join(lines) + "\n"


def _last_moment(findings: Findings) -> str:
    if findings.at is None:  # the backend held no frame of the job's last moments
        return "nothing (the backend holds no frame of the job's last moments)"
    return f"the last moment the backend holds before the end, {shown(findings.at)}"


def _named_cause(anomaly: Anomaly, members: tuple[Anomaly, ...], rank_map: RankMap) -> str:
    """"hang on rank 455": what directly explains a folded anomaly (its root is above)."""
    found = explained_by(anomaly, members, rank_map)
    if found is None:
        return "?"
    cause = found[0]
    return cause.name if cause.rank is None or cause.rank == anomaly.rank else (
        f"{cause.name} on rank {cause.rank}")


def _anomaly_line(anomaly: Anomaly, rank_map: RankMap) -> str:
    where = "the whole job" if anomaly.rank is None else (
        f"rank {anomaly.rank} {_where(anomaly.rank, rank_map)}")
    label = "pending" if anomaly.pending else anomaly.severity
    state = f", {anomaly.state}" if anomaly.pending or anomaly.rule else ""
    return (f"{label:<8}  {where}  {anomaly.name}: "
            f"{anomaly.summary} (since {shown(anomaly.since, dated=True)}{state})")


def _where(rank: int, rank_map: RankMap) -> str:
    found = rank_map.ranks[rank] if rank < len(rank_map) else None
    return f"({found.place})" if found else ""


def _job_line(analysis: Analysis) -> str:
    job = analysis.frame.job if analysis.frame is not None else {}
    parts = []
    if not is_missing(job.get("step", float("nan"))):
        parts.append(f"step {job['step']:,.0f}")
    if not is_missing(analysis.step_seconds):
        parts.append(f"{analysis.step_seconds:.2f} s/step")
    if not is_missing(job.get("tokens_per_s", float("nan"))):
        parts.append(f"{job['tokens_per_s'] / 1e6:.2f} M tokens/s")
    if not is_missing(job.get("loss", float("nan"))):
        parts.append(f"loss {job['loss']:.3f}")
    return ", ".join(parts) or "no job metrics"
