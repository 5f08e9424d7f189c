"""A rank's alert history from three sources: Prometheus, Alertmanager and ranktop itself.

Prometheus keeps every alert's past in the ``ALERTS`` series; one range query over the window
gives each alert's firing and pending intervals. Alertmanager knows what is active now,
silenced or inhibited. ranktop's own event log knows the anomalies it saw. Each source gives
``AlertRecord``s; ``merge`` puts them in one list, newest first. The asking is PromClient's:
calls block (run them in a thread worker), and every failure is its ``QueryError``.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..core.domain import DCGM_GPU_LABEL, DCGM_HOST_LABELS, DCGM_UUID_LABELS
from ..core.events import Event
from ..core.model import Rank
from ..settings.config import Settings
from ..settings.sources import RankSettings
from .prometheus import promql
from .prometheus.client import (
    ALERTMANAGER_ANSWER,
    VICTORIA_METRICS,
    PromClient,
    QueryError,
)

AM_STATES = {"active": "firing", "suppressed": "suppressed", "unprocessed": "unprocessed"}
NO_ALERTS = "no ALERTS series"
VMALERT_NOTE = "VictoriaMetrics keeps ALERTS only where vmalert writes them (-remoteWrite.url)"
_RFC3339 = re.compile(r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", re.I)


@dataclass(frozen=True)
class AlertRecord:
    """One state of one alert on a rank, or one anomaly event ranktop recorded."""

    time: float  # when this state began (epoch seconds)
    name: str  # alertname, or the ranktop anomaly kind
    state: str  # "firing", "pending", "suppressed", "unprocessed", "start", "resolve"
    severity: str  # the alert's severity label, or the anomaly's severity; "" when none
    source: str  # "prometheus", "alertmanager" or "ranktop"
    summary: str = ""  # annotations.summary / description, or the anomaly summary
    end: float | None = None  # when it stopped, if it has and that is known


def alert_matchers(rank: Rank, labels: RankSettings) -> tuple[dict[str, str], ...]:
    """The label sets that tie an alert to ``rank``: an alert matches if it has all of one.

    Host and GPU together (whichever host label the exporter uses), the GPU's UUID (under
    DCGM's labels or the job's own), or the training rank (the job's rank label). A job-wide
    alert carries none of these and matches no rank.
    """
    gpu = str(rank.gpu)
    matchers = [{host: rank.host, DCGM_GPU_LABEL: gpu} for host in DCGM_HOST_LABELS if rank.host]
    if rank.uuid:
        uuid_labels = dict.fromkeys((*DCGM_UUID_LABELS, labels.uuid_label))
        matchers += [{label: rank.uuid} for label in uuid_labels]
    matchers.append({labels.rank_label: str(rank.rank)})
    return tuple(matchers)


def alert_matches(alert: Mapping[str, str], rank: Rank, labels: RankSettings) -> bool:
    """Whether an alert with the labels ``alert`` is about ``rank``."""
    return any(
        all(alert.get(name) == value for name, value in matcher.items())
        for matcher in alert_matchers(rank, labels)
    )


def prometheus_history(
    settings: Settings, rank: Rank, window_seconds: float, now: float, step: float = 15,
) -> list[AlertRecord]:
    """Every firing and pending interval of an alert on ``rank`` in the window ending ``now``.

    A record's ``end`` is the last evaluation that saw the alert, or None while it lasts.
    """
    # Whole seconds, outward so the newest sample is in.
    start, end = math.floor(now - window_seconds), math.ceil(now)
    query = promql.alerts_query(alert_matchers(rank, settings.ranks))
    with PromClient(settings.prometheus) as client:
        series = client.query_range(query, start, end, step)
        if not series and client.backend == VICTORIA_METRICS and not client.query("ALERTS"):
            raise QueryError(NO_ALERTS, VMALERT_NOTE)
    records: list[AlertRecord] = []
    for labels, points in series:
        if alert_matches(labels, rank, settings.ranks):
            records += _series_records(labels, sorted(t for t, _ in points), end, step)
    return records


def alertmanager_alerts(
    url: str, settings: Settings, rank: Rank, timeout: float = 10, now: float | None = None,
) -> list[AlertRecord]:
    """The alerts Alertmanager holds for ``rank``: active, silenced and inhibited."""
    now = time.time() if now is None else now
    with PromClient(settings.prometheus) as client:
        alerts = client.alertmanager_alerts(url, timeout)
    try:
        return [_am_record(alert, now) for alert in alerts
                if alert_matches(alert["labels"], rank, settings.ranks)]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise QueryError("bad answer", ALERTMANAGER_ANSWER) from None


def ranktop_history(events: Iterable[Event], rank: Rank) -> list[AlertRecord]:
    """ranktop's own anomaly starts and resolves on ``rank``."""
    return [
        AlertRecord(time=event.time, name=event.kind, state=event.state,
                    severity=event.severity,
                    source=event.source or "ranktop", summary=event.summary)
        for event in events
        if event.rank == rank.rank
    ]


def merge(*lists: Iterable[AlertRecord]) -> list[AlertRecord]:
    """All records in one list, newest first."""
    return sorted((record for records in lists for record in records),
                  key=lambda record: record.time, reverse=True)


def parse_time(text: str) -> float:
    """Epoch seconds of an RFC 3339 time, nanoseconds and ``Z`` included; ValueError if not."""
    match = _RFC3339.match(text.strip())
    if match is None:
        raise ValueError(f"not an RFC 3339 time: {text[:40]!r}")
    base, fraction, zone = match.groups()
    zone = "+00:00" if zone.upper() == "Z" else zone
    stamp = datetime.fromisoformat(base.upper().replace(" ", "T") + zone)
    return stamp.timestamp() + float(f"0.{fraction or 0}")


def _series_records(labels: Mapping[str, str], times: list[float], end: float,
                    step: float) -> list[AlertRecord]:
    """One record per run of samples; a gap longer than two steps ends a run."""
    runs: list[list[float]] = []
    for stamp in times:
        if runs and stamp - runs[-1][-1] <= 2 * step:
            runs[-1].append(stamp)
        else:
            runs.append([stamp])
    return [
        AlertRecord(time=run[0], name=labels.get("alertname", "?"),
                    state=labels.get("alertstate", "firing"),
                    severity=labels.get("severity", ""), source="prometheus",
                    end=None if end - run[-1] <= 2 * step else run[-1])
        for run in runs
    ]


def _am_record(alert: Mapping[str, Any], now: float) -> AlertRecord:
    labels, annotations = alert["labels"], alert.get("annotations") or {}
    state = str(alert["status"]["state"])
    ends = parse_time(alert["endsAt"]) if alert.get("endsAt") else None
    start = parse_time(alert["startsAt"])
    summary = annotations.get("summary") or annotations.get("description") or ""
    return AlertRecord(
        time=start, name=labels.get("alertname", "?"), state=AM_STATES.get(state, state),
        severity=labels.get("severity", ""), source="alertmanager", summary=str(summary).strip(),
        end=ends if ends is not None and start <= ends <= now else None,
    )
