"""A rank's alert history from three sources: Prometheus, Alertmanager and ranktop itself.

Prometheus keeps every alert's past in the ``ALERTS`` series; one range query over the window
gives each alert's firing and pending intervals. Alertmanager knows what is active now,
silenced or inhibited. ranktop's own event log knows the anomalies it saw. Each source gives
``AlertRecord``s; ``merge`` puts them in one list, newest first. Calls block (run them in a
thread worker), and every failure is an ``AlertSourceError`` whose message holds no secret.
"""

from __future__ import annotations

import math
import re
import ssl
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import urlparse

import httpx
import requests
from prometheus_api_client import PrometheusApiClientException, PrometheusConnect
from ranktop.tui.core.events import Event
from ranktop.tui.core.model import Rank
from ranktop.tui.settings.sources import PrometheusSettings
from urllib3.util.retry import Retry

USER_AGENT = "ranktop"
HOST_LABELS = ("Hostname", "hostname", "exported_pod", "pod")
UUID_LABELS = ("UUID", "gpu_uuid")
RANK_LABEL = "rank"
AM_STATES = {"active": "firing", "suppressed": "suppressed", "unprocessed": "unprocessed"}
_RFC3339 = re.compile(r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", re.I)


@dataclass(frozen=True)
class AlertRecord:
    """One state of one alert on a rank, or one anomaly event ranktop recorded."""

    time: float  # when this state began (epoch seconds)
    name: str  # alertname, or the ranktop anomaly kind
    state: str  # "firing", "pending", "suppressed", "unprocessed", "start", "resolve"
    value: str  # the alert's value or the anomaly's evidence, short; "" when unknown
    source: str  # "prometheus", "alertmanager" or "ranktop"
    summary: str = ""  # annotations.summary / description, or the anomaly summary
    end: float | None = None  # when it stopped, if it has and that is known


class AlertSourceError(Exception):
    """A source that did not answer; ``kind`` is the short word the console shows."""

    def __init__(self, kind: str, message: str = "") -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind
        self.message = message


def alert_matchers(rank: Rank) -> tuple[dict[str, str], ...]:
    """The label sets that tie an alert to ``rank``: an alert matches if it has all of one.

    Host and GPU together (whichever host label the exporter uses), the GPU's UUID, or the
    training rank. A job-wide alert carries none of these and matches no rank.
    """
    gpu = str(rank.gpu)
    matchers = [{label: rank.host, "gpu": gpu} for label in HOST_LABELS if rank.host]
    matchers += [{label: rank.uuid} for label in UUID_LABELS if rank.uuid]
    matchers.append({RANK_LABEL: str(rank.rank)})
    return tuple(matchers)


def alert_matches(labels: Mapping[str, str], rank: Rank) -> bool:
    """Whether an alert with these labels is about ``rank``."""
    return any(
        all(labels.get(name) == value for name, value in matcher.items())
        for matcher in alert_matchers(rank)
    )


def alerts_query(rank: Rank) -> str:
    """PromQL for the ``ALERTS`` series (firing or pending) that may be about ``rank``."""
    selectors = []
    for matcher in alert_matchers(rank):
        pairs = [f"{name}={_promql_string(value)}" for name, value in matcher.items()]
        selectors.append("ALERTS{" + ",".join(['alertstate=~"firing|pending"', *pairs]) + "}")
    return " or ".join(selectors)


def prometheus_history(
    settings: PrometheusSettings, rank: Rank, window_seconds: float, now: float,
    step: float = 15,
) -> list[AlertRecord]:
    """Every firing and pending interval of an alert on ``rank`` in the window ending ``now``.

    A record's ``end`` is the last evaluation that saw the alert, or None while it lasts.
    """
    if not settings.url:
        raise AlertSourceError("not configured", "no Prometheus URL")
    # Whole seconds (the client rounds them anyway), outward so the newest sample is in.
    start, end = math.floor(now - window_seconds), math.ceil(now)
    scrub = _Scrubber(settings)
    try:
        with _connect(settings) as prometheus:
            result = prometheus.custom_query_range(
                alerts_query(rank), _utc(start), _utc(end), step=f"{step:g}")
    except requests.exceptions.SSLError as error:
        raise AlertSourceError("TLS", scrub(_first_line(error))) from None
    except requests.exceptions.Timeout:
        raise AlertSourceError("timed out", f"no answer in {settings.timeout_seconds:g} s"
                               ) from None
    except requests.exceptions.ConnectionError as error:
        raise AlertSourceError(_connect_kind(str(error)), scrub(settings.url)) from None
    except PrometheusApiClientException as error:
        raise _http_error(scrub(str(error))) from None
    except requests.exceptions.JSONDecodeError:
        raise AlertSourceError("bad answer", "not a Prometheus API response") from None
    except requests.exceptions.RequestException as error:
        raise AlertSourceError("request failed", scrub(_first_line(error))) from None
    except (ValueError, KeyError, TypeError):
        raise AlertSourceError("bad answer", "not a Prometheus API response") from None
    return _intervals(result, rank, end, step)


def alertmanager_alerts(
    url: str, settings: PrometheusSettings, rank: Rank, timeout: float = 10,
    now: float | None = None,
) -> list[AlertRecord]:
    """The alerts Alertmanager holds for ``rank``: active, silenced and inhibited."""
    now = time.time() if now is None else now
    scrub = _Scrubber(settings, url)
    params = {"active": "true", "silenced": "true", "inhibited": "true"}
    try:
        with _http_client(settings, timeout) as client:
            answer = client.get(f"{url.rstrip('/')}/api/v2/alerts", params=params)
    except httpx.TimeoutException:
        raise AlertSourceError("timed out", f"no answer in {timeout:g} s") from None
    except httpx.ConnectError as error:
        if _is_tls(error):
            raise AlertSourceError("TLS", scrub(_first_line(error))) from None
        raise AlertSourceError(_connect_kind(str(error)), scrub(url)) from None
    except (httpx.HTTPError, httpx.InvalidURL, ssl.SSLError, OSError) as error:
        kind = "TLS" if _is_tls(error) else "request failed"
        raise AlertSourceError(kind, scrub(_first_line(error))) from None
    if answer.status_code != 200:
        lines = answer.text.strip().splitlines()
        raise AlertSourceError(f"HTTP {answer.status_code}", scrub(lines[0][:160] if lines else ""))
    try:
        records = [_am_record(alert, now) for alert in answer.json() if
                   alert_matches(alert["labels"], rank)]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise AlertSourceError("bad answer", "not an Alertmanager v2 alerts list") from None
    return records


def ranktop_history(events: Iterable[Event], rank: Rank) -> list[AlertRecord]:
    """ranktop's own anomaly starts and resolves on ``rank``."""
    return [
        AlertRecord(time=event.time, name=event.kind, state=event.state, value=event.severity,
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


def _intervals(result: object, rank: Rank, end: float, step: float) -> list[AlertRecord]:
    if not isinstance(result, list):
        raise AlertSourceError("bad answer", "expected a range vector")
    records = []
    try:
        for series in result:
            labels = series["metric"]
            if alert_matches(labels, rank):
                times = sorted(float(stamp) for stamp, _ in series["values"])
                records += _series_records(labels, times, end, step)
    except (KeyError, TypeError, ValueError):
        raise AlertSourceError("bad answer", "a series without labels or values") from None
    return records


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
                    state=labels.get("alertstate", "firing"), value="", source="prometheus",
                    end=None if end - run[-1] <= 2 * step else run[-1])
        for run in runs
    ]


def _am_record(alert: Mapping, now: float) -> AlertRecord:
    labels, annotations = alert["labels"], alert.get("annotations") or {}
    state = alert["status"]["state"]
    ends = parse_time(alert["endsAt"]) if alert.get("endsAt") else None
    start = parse_time(alert["startsAt"])
    summary = annotations.get("summary") or annotations.get("description") or ""
    return AlertRecord(
        time=start, name=labels.get("alertname", "?"), state=AM_STATES.get(state, state),
        value="", source="alertmanager", summary=str(summary).strip(),
        end=ends if ends is not None and start <= ends <= now else None,
    )


def _connect(settings: PrometheusSettings) -> PrometheusConnect:
    """A client set up like ranktop's PromClient: POST, no retries, auth and TLS applied."""
    session = requests.Session()
    session.verify = _verify(settings)
    auth = (settings.username, settings.password.value) if settings.username else None
    return PrometheusConnect(
        url=settings.url, headers=_headers(settings), auth=auth, session=session,
        retry=Retry(total=0), timeout=settings.timeout_seconds, method="POST",
    )


def _http_client(settings: PrometheusSettings, timeout: float) -> httpx.Client:
    verify = _verify(settings)
    if isinstance(verify, str):
        verify = ssl.create_default_context(cafile=verify)
    auth = (settings.username, settings.password.value) if settings.username else None
    return httpx.Client(headers=_headers(settings), auth=auth, verify=verify, timeout=timeout)


def _verify(settings: PrometheusSettings) -> bool | str:
    if settings.insecure:
        return False
    return str(settings.ca_bundle) if settings.ca_bundle else True


def _headers(settings: PrometheusSettings) -> dict[str, str]:
    headers = {"User-Agent": USER_AGENT}
    if settings.bearer_token:
        headers["Authorization"] = f"Bearer {settings.bearer_token.value}"
    return headers


class _Scrubber:
    """Takes the settings' credentials, and any user:password@ in a URL, out of a text."""

    def __init__(self, settings: PrometheusSettings, *urls: str) -> None:
        found = [urlparse(url).password for url in (settings.url, *urls)]
        candidates = (settings.bearer_token.value, settings.password.value, *found)
        self._secrets = [secret for secret in candidates if secret]

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return re.sub(r"//[^/@\s]+@", "//***@", text)


def _http_error(text: str) -> AlertSourceError:
    match = re.search(r"HTTP Status Code (\d+)", text)
    detail = re.search(r'"error":\s*"([^"]{0,160})', text)
    return AlertSourceError(f"HTTP {match.group(1) if match else 'error'}",
                            detail.group(1) if detail else "")


def _connect_kind(text: str) -> str:
    return "connection refused" if "refused" in text.lower() else "cannot connect"


def _is_tls(error: BaseException) -> bool:
    cause = error.__cause__ or error.__context__
    return isinstance(error, ssl.SSLError) or isinstance(cause, ssl.SSLError) or (
        "SSL" in str(error) or "CERTIFICATE" in str(error))


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0][:200] if str(error) else error.__class__.__name__


def _promql_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)
