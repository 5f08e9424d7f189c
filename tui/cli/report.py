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
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ranktop.tui.cli.report_actions import actions_json, actions_lines
from ranktop.tui.core.analysis import Analysis
from ranktop.tui.core.detect import Anomaly
from ranktop.tui.core.hang import HangVerdict
from ranktop.tui.core.incidents import explained_by
from ranktop.tui.core.metrics import clock_time, format_value
from ranktop.tui.core.model import Frame, Health, RankMap, SourceStatus, is_missing
from ranktop.tui.core.moment import shown_full
from ranktop.tui.core.parallelism import for_job
from ranktop.tui.engine.client import EngineClient
from ranktop.tui.engine.replay import NothingThen
from ranktop.tui.settings.config import Settings
from ranktop.tui.sources.prom_client import QueryError

WORST_SHOWN = 3
# How long a report waits, after its last poll, for the hang triage that poll asked for.
TRIAGE_WAIT_SECONDS = 30.0


@dataclass
class Findings:
    """What a report says: the last analysis, what came and went, why the source failed."""

    job: str
    analysis: Analysis
    resolved: list[Anomaly] = field(default_factory=list)
    error: str = ""
    stall_hold: float = math.inf  # seconds without progress past which a job is not healthy
    at: float | None = None  # the past moment reported (epoch seconds); None: live

    @property
    def active(self) -> list[Anomaly]:
        return list(self.analysis.anomalies)

    @property
    def frame(self) -> Frame | None:
        return self.analysis.frame

    @property
    def rank_map(self) -> RankMap:
        return self.analysis.rank_map

    @property
    def status(self) -> SourceStatus:
        return self.analysis.status


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
    analysis = snapshot.analysis
    active = {a.key for a in analysis.anomalies}
    ended = {a.key: a for a in reversed(analysis.resolved) if a.key not in active}  # newest
    resolved = sorted(ended.values(), key=lambda a: a.order)
    return Findings(engine.job_name, analysis, resolved, snapshot.error,
                    settings.detect.job_stall_seconds)


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


def exit_code(findings: Findings) -> int:
    """1 when a confirmed anomaly is active, the job stands still past a stall's hold, or
    the report cannot judge; pending anomalies alone are listed but do not fail it."""
    confirmed = findings.analysis.confirmed
    return 1 if confirmed or no_progress(findings) or cannot_judge(findings) else 0


def no_progress(findings: Findings) -> str:
    """"no progress for 27 s (a stall may last 20 s)" when the step has stood still past
    the stall's hold: not healthy, whatever is still pending; else ""."""
    frame = findings.frame
    if frame is None:
        return ""
    still = findings.analysis.progress.stalled_for(frame.time)
    if still < findings.stall_hold:
        return ""
    return f"no progress for {still:.0f} s (a stall may last {findings.stall_hold:.0f} s)"


def cannot_judge(findings: Findings) -> str:
    """Why the data is not enough to call the job healthy, or "" when it is."""
    if findings.error or findings.frame is None:
        return f"the source could not be read: {findings.error or findings.status.message}"
    if findings.status.health in (Health.STALE, Health.ERROR) or (
            findings.status.health is Health.SLOW and "partial" in findings.status.message):
        return f"the source is {findings.status.health.value}: {findings.status.message}"
    if len(findings.rank_map) and findings.analysis.ranks_up == 0:
        return f"no rank of {len(findings.rank_map)} is up"
    return ""


def as_json(findings: Findings, settings: Settings) -> str:
    frame = findings.frame
    analysis = findings.analysis
    document = {
        "job": findings.job,
        "time": frame.time if frame else None,
        "at": shown_full(findings.at) if findings.at is not None else None,
        "live": findings.at is None,
        "healthy": exit_code(findings) == 0,
        "cannot_judge": cannot_judge(findings) or None,
        "no_progress": no_progress(findings) or None,
        "source": {"name": findings.status.name, "health": findings.status.health.value,
                   "message": findings.error or findings.status.message,
                   "ranks_from": findings.rank_map.source},
        "ranks": {"total": len(findings.rank_map), "up": analysis.ranks_up,
                  "missing": analysis.down if frame else []},
        "job_values": {k: (None if is_missing(v) else v) for k, v in (frame.job if frame
                                                                      else {}).items()},
        "anomalies": [{**_anomaly(a, findings.rank_map), "explained_by": _cause(a, findings)}
                      for a in findings.active],
        "resolved": [_anomaly(a, findings.rank_map) for a in findings.resolved],
        "hang": _hang(analysis.hang),
        "actions": actions_json(analysis.actions),
        "worst": {m: [{"rank": r, "value": v} for r, v in _worst(frame, settings, m)]
                  for m in _report_metrics(settings, frame)},
    }
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)


def as_text(findings: Findings, settings: Settings) -> str:
    frame, rank_map = findings.frame, findings.rank_map
    when = clock_time(frame.time, full=True) if frame else "no data"
    if findings.at is not None:
        when = f"at {shown_full(findings.at)}, from the backend's history: not live"
    lines = [f"ranktop report: {findings.job}  {when}",
             f"source: {findings.status.name} ({findings.status.health.value}); "
             f"ranks from {rank_map.source}"]
    if findings.error:
        lines.append(f"could not read the source: {findings.error}")
    elif cannot_judge(findings):
        lines.append(f"cannot judge: {cannot_judge(findings)}")
    if frame is None:
        return "\n".join(lines) + "\n"
    missing = [str(r) for r in findings.analysis.down]
    lines.append(f"ranks: {findings.analysis.ranks_up}/{len(rank_map)} up"
                 + (f", {len(missing)} missing ({', '.join(missing[:20])})" if missing else ""))
    lines.append("job: " + _job_line(findings.analysis))
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
    if findings.resolved:
        lines += ["", "seen during the report, since resolved:"]
        lines += [f"  {_anomaly_line(a, rank_map)}" for a in findings.resolved]
    lines += ["", "worst ranks:"]
    for metric_id in _report_metrics(settings, frame):
        metric = settings.metrics[metric_id]
        worst = ", ".join(f"rank {r} {_where(r, rank_map)} {format_value(metric, v)}"
                          for r, v in _worst(frame, settings, metric_id))
        summary = findings.analysis.summaries.get(metric_id)
        median = f" (median {format_value(metric, summary[1])})" if summary else ""
        lines.append(f"  {metric.title:<16} {worst or 'no data'}{median}")
    return "\n".join(lines) + "\n"


def _report_metrics(settings: Settings, frame: Frame | None) -> list[str]:
    wanted = [*settings.maps, settings.step_alternate]
    return [m for m in wanted if frame is not None and m in frame.values]


def _worst(frame: Frame | None, settings: Settings, metric_id: str) -> list[tuple[int, float]]:
    if frame is None or metric_id not in frame.values:
        return []
    present = [(r, v) for r, v in enumerate(frame.values[metric_id]) if not is_missing(v)]
    high_is_bad = settings.metrics[metric_id].bad == "high"
    return sorted(present, key=lambda rv: rv[1], reverse=high_is_bad)[:WORST_SHOWN]


def _anomaly(anomaly: Anomaly, rank_map: RankMap) -> dict:
    rank = rank_map.ranks[anomaly.rank] if anomaly.rank is not None else None
    return {"kind": anomaly.kind, "severity": anomaly.severity, "rank": anomaly.rank,
            "host": rank.host if rank else None, "gpu": rank.gpu if rank else None,
            "inferred": rank.inferred if rank else None,
            "summary": anomaly.summary, "since": anomaly.since,
            "state": "pending" if anomaly.pending else "confirmed",
            "held_seconds": round(anomaly.held, 1),
            "confirm_after_seconds": anomaly.confirm_after,
            "confirmed_by": anomaly.rule or None, "awaiting": anomaly.awaiting or None}


def _cause(anomaly: Anomaly, findings: Findings) -> dict | None:
    """The active anomaly that explains ``anomaly`` and why (None: it is a root)."""
    found = explained_by(anomaly, findings.active, findings.rank_map)
    if found is None:
        return None
    cause, rule = found
    return {"kind": cause.kind, "rank": cause.rank, "why": rule.why}


def _named_cause(anomaly: Anomaly, members: tuple[Anomaly, ...], rank_map: RankMap) -> str:
    """"hang on rank 455": what directly explains a folded anomaly (its root is above)."""
    found = explained_by(anomaly, members, rank_map)
    if found is None:
        return "?"
    cause = found[0]
    return cause.name if cause.rank is None or cause.rank == anomaly.rank else (
        f"{cause.name} on rank {cause.rank}")


def _hang(verdict: HangVerdict | None) -> dict | None:
    """The hang verdict with its evidence, the Flight Recorder's included when read."""
    if verdict is None:
        return None
    flight = verdict.flight
    return {"summary": verdict.summary, "sure": verdict.sure, "culprits": verdict.behind,
            "dead": verdict.dead, "lagging": verdict.lagging,
            "reporting": len(verdict.reporting),
            "awaiting": verdict.awaiting or None,
            "disagreement": verdict.disagreement or None,
            "evidence": verdict.evidence,
            "flight_recorder": None if flight is None else {
                "verdict": flight.kind, "culprits": list(flight.culprits),
                "group": flight.group or None, "group_size": flight.group_size,
                "seq": flight.seq, "operation": flight.op or None, "sizes": flight.sizes or None,
                "call_site": flight.call_site or None,
                "waiting_call_site": flight.waiting_call_site or None,
                "waiting": len(flight.waiting), "missing_dumps": list(flight.missing_dumps),
                "unreadable": flight.unreadable, "downstream": list(flight.downstream),
                "evidence": flight.evidence, "summary": flight.summary,
                "written": list(flight.written) if flight.written else None,
                "notes": list(flight.notes)}}


def _anomaly_line(anomaly: Anomaly, rank_map: RankMap) -> str:
    where = "the whole job" if anomaly.rank is None else (
        f"rank {anomaly.rank} {_where(anomaly.rank, rank_map)}")
    label = "pending" if anomaly.pending else anomaly.severity
    state = f", {anomaly.state}" if anomaly.pending or anomaly.rule else ""
    return (f"{label:<8}  {where}  {anomaly.name}: "
            f"{anomaly.summary} (since {clock_time(anomaly.since, full=True)}{state})")


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
