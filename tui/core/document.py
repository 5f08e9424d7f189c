"""The analysis as a JSON document: what `ranktop report --json` prints and what a bundle's
``analysis.json`` holds, one schema for both (``docs/analysis-schema.json``; its version is
``SCHEMA_VERSION``, raised whenever a key changes meaning or goes away; new keys may come
without it). A bundle adds what only it carries: every rank's values on the four maps, the
hardware ledger, the alerts firing and the log excerpts (``bundle_part``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .advice.advise import Action
from .advice.incidents import explained_by
from .advice.restart_cost import RestartCost
from .config_values import MetricDef
from .detect.detectors import Anomaly
from .detect.goodput import Goodput
from .findings import Findings, cannot_judge, exit_code, no_progress
from .hang.triage import HangVerdict
from .model import Frame, QueryTime, Rank, RankMap, is_missing
from .moment import shown_full

SCHEMA_VERSION = 1
WORST_SHOWN = 3


def document(findings: Findings, metrics: Mapping[str, MetricDef], shown: Sequence[str],
             version: str) -> dict:
    """The document of ``findings``; ``shown``: the metrics whose worst ranks it lists (the
    four maps' and the step time's), ``version``: ranktop's."""
    frame = findings.frame
    analysis = findings.analysis
    return finite({
        "schema": SCHEMA_VERSION,
        "ranktop": version,
        "job": findings.job,
        "time": frame.time if frame else None,
        "at": shown_full(findings.at) if findings.at is not None else None,
        "live": findings.at is None,
        "ended": _ended(findings),
        "healthy": exit_code(findings) == 0,
        "cannot_judge": cannot_judge(findings) or None,
        "no_progress": no_progress(findings) or None,
        "source": {"name": findings.status.name, "health": findings.status.health.value,
                   "message": findings.error or findings.status.message,
                   "ranks_from": findings.rank_map.source,
                   # why the backend's answers lack series ([]: they are whole)
                   "partial": list(findings.status.partial),
                   "infos": list(findings.status.infos),
                   "poll_seconds": findings.status.poll_seconds,
                   "slowest_query": _slowest(findings.status.slowest),
                   "detail": findings.status.detail},
        "ranks": {"total": len(findings.rank_map), "up": analysis.ranks_up,
                  "missing": analysis.down if frame else [],
                  "not_answered": sorted(analysis.unknown)},
        "job_values": {k: _number(v) for k, v in (frame.job if frame else {}).items()},
        "anomalies": [{**anomaly_entry(a, findings.rank_map),
                       "explained_by": _cause(a, findings)} for a in findings.active],
        # the restarts on record first: each is a resolved incident of its own (kind "restart")
        "resolved": [anomaly_entry(a, findings.rank_map)
                     for a in [*(r.anomaly for r in analysis.restarts), *findings.resolved]],
        "hang": hang_entry(analysis.hang),
        "actions": actions_entry(analysis.actions),
        "goodput": goodput_entry(analysis.goodput),
        "worst": {m: [{"rank": r, "value": v} for r, v in worst(frame, metrics[m])]
                  for m in shown if frame is not None and m in frame.values},
    })


def _slowest(query: QueryTime | None) -> dict | None:
    """The last poll's slowest query: what it asked for, its seconds and its bytes."""
    if query is None:
        return None
    return {"key": query.key, "asked_for": query.asked_for, "seconds": query.seconds,
            "bytes": query.size or None}


def _ended(findings: Findings) -> dict | None:
    """When the job's series ended, for a report started after: ``at`` is then their last
    moment the backend holds."""
    end = findings.ended
    if end is None:
        return None
    return {"time": end.at, "at": shown_full(end.at), "seconds_ago": end.seen - end.at,
            "said": end.said()}


def bundle_part(findings: Findings, maps: Sequence[str], alerts: Mapping[int, Sequence],
                excerpts: Sequence[dict]) -> dict:
    """What a bundle's document holds besides the report's: every rank's values on the four
    maps (null: no value), the hardware ledger, the alerts and the saved log excerpts."""
    frame, analysis = findings.frame, findings.analysis
    return finite({
        "rank_values": {m: [_shown(v) for v in frame.values[m]]
                        for m in maps if frame is not None and m in frame.values},
        "ledger": [{"rank": rank, "counter": entry.counter.noun, "total": entry.total,
                    "rise": entry.rise, "text": entry.text()}
                   for rank, entries in sorted(analysis.ledger.items()) for entry in entries],
        "down": [{"rank": d.rank, "since": d.since, "last_seen": d.last_seen,
                  "fault": d.fault or None, "summary": d.summary}
                 for d in sorted(analysis.down_ranks.values(), key=lambda d: d.rank)],
        "alerts": [{"rank": rank, "row": list(row)} for rank, rows in sorted(alerts.items())
                   for row in rows],
        "log_excerpts": list(excerpts),
    })


def finite(value: object) -> object:
    """``value`` with each float in it that JSON has no number for (NaN, an infinity: an
    impact or a ratio over a median of 0) as None, in lists and objects at any depth."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def worst(frame: Frame | None, metric: MetricDef) -> list[tuple[int, float]]:
    """The ranks worst by ``metric`` in ``frame``, worst first."""
    if frame is None or metric.id not in frame.values:
        return []
    present = [(r, v) for r, v in enumerate(frame.values[metric.id]) if not is_missing(v)]
    return sorted(present, key=lambda rv: rv[1], reverse=metric.bad == "high")[:WORST_SHOWN]


def anomaly_entry(anomaly: Anomaly, rank_map: RankMap) -> dict:
    rank = rank_map.ranks[anomaly.rank] if anomaly.rank is not None else None
    return {"kind": anomaly.kind, "severity": anomaly.severity, "rank": anomaly.rank,
            "host": rank.host if rank else None, **_device(rank),
            "inferred": rank.inferred if rank else None,
            "summary": anomaly.summary, "since": anomaly.since,
            "state": "pending" if anomaly.pending else "confirmed",
            "held_seconds": round(anomaly.held, 1),
            "confirm_after_seconds": anomaly.confirm_after,
            "confirmed_by": anomaly.rule or None, "awaiting": anomaly.awaiting or None,
            "no_data_since": anomaly.unseen_since}


def _device(rank: Rank | None) -> dict:
    """The rank's GPU where GPU data named it, else the local rank its labels give."""
    index = rank.gpu if rank is not None and rank.gpu >= 0 else None
    named = rank is not None and rank.gpu_named
    return {"gpu": index if named else None, "local_rank": None if named else index}


def _cause(anomaly: Anomaly, findings: Findings) -> dict | None:
    """The active anomaly that explains ``anomaly`` and why (None: it is a root)."""
    found = explained_by(anomaly, findings.active, findings.rank_map,
                         findings.analysis.left_behind)
    if found is None:
        return None
    cause, rule = found
    return {"kind": cause.kind, "rank": cause.rank, "why": rule.why}


def actions_entry(actions: Sequence[Action]) -> list[dict]:
    """The advice: kind, node, gpu, rank, rule, evidence, command (never run), for a drain
    who else is on the node, and a restart's cost."""
    return [{"kind": a.kind, "text": a.text, "node": a.node or None, "gpu": a.gpu,
             "rank": a.rank, "rule": a.rule, "evidence": a.evidence,
             "command": "\n".join(a.commands) or None, "others": _others(a),
             "restart": restart_entry(a.cost)}
            for a in actions]


def _others(action: Action) -> dict | None:
    """Who else a drain stops: known or not (and why), each other job and its GPUs."""
    if not action.also:
        return None
    found = action.others
    return {"known": found is not None and found.known, "text": action.also,
            "error": found.error or None if found is not None else None,
            "tenants": [{"user": t.user or None, "gpus": list(t.gpus)}
                        for t in (found.others if found is not None else ())]}


def restart_entry(cost: RestartCost | None) -> dict | None:
    """A restart's cost: the checkpoint it resumes from, what it loses, the idle so far."""
    if cost is None:
        return None
    found = cost.checkpoint
    return {"checkpoint_step": None if found is None else found.step,
            "checkpoint_source": None if found is None else found.source,
            "checkpoint_line": found.line or None if found is not None else None,
            "steps_lost": cost.steps_lost, "gpu_hours_lost": cost.gpu_hours_lost,
            "stopped_seconds": cost.stopped_seconds, "idle_gpu_hours": cost.idle_gpu_hours}


def goodput_entry(goodput: Goodput) -> dict:
    """The goodput's shares (null: unknown), what they cover, the seconds lost by cause."""
    return {"hour": _number(goodput.hour), "covered_seconds": round(goodput.covered, 1),
            "whole_hour": goodput.whole_hour, "since_start": _number(goodput.since_start),
            "watched_seconds": round(goodput.watched, 1), "job": _number(goodput.job),
            "job_began": goodput.job_began,
            "lost_seconds": {cause: round(s, 1) for cause, s in goodput.lost.items()},
            "baseline_step_seconds": _number(goodput.baseline_step)}


def hang_entry(verdict: HangVerdict | None) -> dict | None:
    """The hang verdict with its evidence, the Flight Recorder's included when read."""
    if verdict is None:
        return None
    flight = verdict.flight
    return {"summary": verdict.summary, "sure": verdict.sure, "culprits": verdict.behind,
            "dead": verdict.dead, "lagging": verdict.lagging,
            "reporting": len(verdict.reporting),
            "awaiting": verdict.awaiting or None,
            "disagreement": verdict.disagreement or None,
            "evidence": {rank: lines for rank, lines in verdict.evidence.items() if lines},
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


def _shown(value: float) -> float | None:
    """A map's value to 6 significant digits: more than the screen shows, a third of the
    bytes of every digit Python keeps."""
    return None if _number(value) is None else float(f"{value:.6g}")


def _number(value: float) -> float | None:
    """``value``, or None for no data and for an infinity (neither is a JSON number)."""
    return value if math.isfinite(value) else None
