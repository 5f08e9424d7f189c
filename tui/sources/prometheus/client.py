"""Every HTTP exchange ranktop has with Prometheus (or any API that answers PromQL the same
way) and with Alertmanager, and failures that say what they are.

Instant and range queries go to Prometheus by POST; the names of metrics and labels (for
discovering a job's metrics) by GET; the alerts Alertmanager holds come from its v2 API, with
the same credentials and TLS settings. What a backend says beside an answer is kept on the
vector (``Notes``): a partial answer (Prometheus's and Thanos's ``warnings``,
VictoriaMetrics cluster's ``isPartial``) for the source to hold what it lacks as not known,
and Prometheus 3's ``infos`` to show; Mimir and Cortex take a path prefix in the URL and a
tenant in ``X-Scope-OrgID``; VictoriaMetrics is asked for its newest samples when
``latency_offset`` is set. Every failure is a ``QueryError``
whose ``kind`` is the short word the console shows ("connection refused", "timed out",
"HTTP 503", "TLS", "bad answer", ...) and whose message holds no secret. Everything from
outside is plain text once it is past this module: label values and label names (whoever
runs a job sets its labels), alert texts and error bodies lose their control characters
(``core.text.plain``), so no escape sequence reaches the terminal; an instant vector that is
plain already is decoded fast, without looking at its labels again (prom_decode). Nothing
is retried: the next poll is the retry, and a poll must stay short. A request has one
deadline, its timeout, for the whole exchange: a server that trickles its headers or its
body (slowloris) times out like one that never answers. A body is bounded after it is
inflated: past ``MAX_BODY_BYTES``, or past what is left of the ``ByteBudget`` the caller
shares among its requests (a poll's queries), it is refused (bounded_body). A 429 or 503
that says ``Retry-After`` carries it (``QueryError.retry_after``) for the poller to honour.
Calls block: run them in a thread.
"""

from __future__ import annotations

import base64
import email.utils
import math
import re
import ssl
import time
from collections.abc import Iterator, Mapping
from typing import NamedTuple
from urllib.parse import urlparse

import httpx

from ...core.text import plain
from ...settings.sources import PrometheusSettings, without_userinfo
from ..bounded_body import (
    ENCODINGS,
    BodyEncoding,
    BodyTooLarge,
    BodyTooSlow,
    ByteBudget,
    read_body,
)
from ..heap import map_large_buffers
from ..http_pool import Lease, Pools
from ..workers import Workers
from .decode import (
    RECORDS,
    Notes,
    instant_vector,
    plain_labels,
    range_matrix,
)
from .decode import answer as decoded_answer

USER_AGENT = "ranktop"
PROMETHEUS_ANSWER = "not a Prometheus API response"
ALERTMANAGER_ANSWER = "not an Alertmanager v2 alerts list"
MAX_BODY_BYTES = 256_000_000  # 100,000 full DCGM series are ~43 MB
TOO_LARGE = "too large"
MAX_RETRY_AFTER = 300.0
TENANT_HEADER = "X-Scope-OrgID"  # Mimir's and Cortex's tenant
VICTORIA_METRICS = "VictoriaMetrics"
# VictoriaMetrics' HTTP server names itself on every answer with this header.
VICTORIA_HEADER = "X-Server-Hostname"
WORKERS = 8  # exchanges in flight at once, at most
# Thanos keeps raw samples for at least this long before it downsamples them to 5 minutes:
# a moment this recent is asked for raw data, an older one for what the store holds.
RAW_SECONDS = 40 * 3600

Form = Mapping[str, str | list[str]]  # a request's fields; a list repeats its name


class QueryError(Exception):
    """A request that did not answer, whichever the API; ``kind`` is what the header calls it."""

    def __init__(self, kind: str, message: str = "", retry_after: float | None = None) -> None:
        kind, message = plain(kind, 40), plain(message, 300)
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after  # seconds the server asked us to wait, if it did

    def bare(self) -> QueryError:
        """The error without its traceback and the errors it was raised in: their frames
        hold what the request read (a body of megabytes), as long as the error is kept."""
        self.__cause__ = self.__context__ = None
        return self.with_traceback(None)


class Sample(NamedTuple):
    labels: Mapping[str, str]
    value: float
    time: float


class Series(NamedTuple):
    labels: Mapping[str, str]
    points: list[tuple[float, float]]  # (time, value), oldest first


WHOLE = Notes()  # an answer the backend said nothing beside


class Matrix(list):
    """A range answer's series, with what the backend said beside them (``notes``)."""

    def __init__(self, series: list[Series] | None = None, notes: Notes = WHOLE) -> None:
        super().__init__(series or [])
        self.notes = notes


class Vector:
    """An instant vector as Prometheus sent it, read sample by sample without copying;
    ``notes`` are what the backend said beside it (``Notes.partial``: why it may lack series);
    ``originals`` the label values that were made plain, as they came, by what they became
    (what a query about them sends); ``size`` the bytes of the body it was read from."""

    def __init__(self, result: list, notes: Notes = WHOLE,
                 originals: Mapping[str, str] | None = None, size: int = 0) -> None:
        self._result = result  # RECORDS (decode's fast path, past's), or dicts as JSON reads
        self.notes = notes
        self.originals = originals or {}
        self.size = size  # 0: not read from a body

    def __len__(self) -> int:
        return len(self._result)

    def __bool__(self) -> bool:
        return bool(self._result)

    def __iter__(self) -> Iterator[Sample]:
        try:
            for item in self._result:
                if isinstance(item, RECORDS):
                    yield Sample(item.metric, float(item.value[1]), item.value[0])
                else:
                    stamp, text = item["value"]
                    yield Sample(item["metric"], sample_value(text), float(stamp))
        except (KeyError, TypeError, ValueError, OverflowError):
            raise QueryError("bad answer", "a sample without labels or value") from None

    def parted(self, label: str) -> tuple[Vector, Vector]:
        """The series that do not carry ``label``, and those that do, as two vectors."""
        without: list = []
        carrying: list = []
        for item in self._result:
            labels = item.metric if isinstance(item, RECORDS) else item.get("metric", {})
            (carrying if label in labels else without).append(item)
        return (Vector(without, self.notes, self.originals),
                Vector(carrying, WHOLE, self.originals))

    def pairs(self) -> Iterator[tuple[Mapping[str, str], float]]:
        """Each sample's labels and value: what a poll reads, without making Samples (nor a
        list of them: pairs that die at once leave the garbage collector nothing to do)."""
        if not (self._result and isinstance(self._result[0], RECORDS)):
            for sample in self:
                yield sample.labels, sample.value
            return
        try:
            for item in self._result:
                yield item.metric, float(item.value[1])
        except ValueError:
            raise QueryError("bad answer", "a sample value that is not a number") from None


def sample_value(value: object) -> float:
    """A sample's value as a float; an integer of hundreds of digits (a JSON number, where
    Prometheus writes a string) is an infinity, which the source reads as no data."""
    try:
        return float(value)  # type: ignore[arg-type]
    except OverflowError:
        return math.inf


class PromClient:
    """Queries to one Prometheus-compatible API, and alerts from an Alertmanager, with the
    credentials and TLS settings of ``settings``. One connection pool, opened on first use."""

    def __init__(self, settings: PrometheusSettings) -> None:
        map_large_buffers()  # what an answer took is given back when it is let go
        self.settings = settings
        self.backend = ""  # "VictoriaMetrics" once an answer says so; "" while unknown
        self._pools = Pools(self._new_pool)
        # Threads kept for the exchanges (not one started per request): enough for a poll's
        # concurrent queries and the screens' own requests beside them.
        self._workers = Workers(WORKERS, "ranktop-http")
        # The URL holds no password: settings moved any out of it, into these.
        found = [settings.bearer_token.value, settings.password.value,
                 _basic(settings.username, settings.password.value)]
        self._secrets = [secret for secret in found if secret]

    def __enter__(self) -> PromClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._workers.stop()
        self._pools.close()

    def query(self, promql: str, budget: ByteBudget | None = None,
              at: float | None = None) -> Vector:
        """The instant vector ``promql`` evaluates to now (or at ``at``, epoch seconds); its
        body counts against ``budget`` where one is given."""
        when = {"time": _seconds(at)} if at is not None else {}
        recent = at is None or time.time() - at < RAW_SECONDS
        answer = self._ask("query", {"query": promql, **when, **self._freshness(),
                                     **self._distributed(recent)}, budget=budget)
        fast = instant_vector(answer.content)
        if fast is not None:
            return Vector(*fast, size=len(answer.content))
        originals: dict[str, str] = {}
        payload = self._payload(answer, "POST", originals)
        data = payload["data"]
        result = data.get("result") if data.get("resultType") == "vector" else None
        # a scalar or a string is a list too, of a time and a value: no series in it
        if not (isinstance(result, list) and all(isinstance(item, dict) for item in result)):
            raise QueryError("bad answer", "expected an instant vector")
        notes = Notes.of(payload.get("warnings"), payload.get("infos"), payload.get("isPartial"))
        return Vector(result, notes, originals, len(answer.content))

    def metric_names(self, since: float) -> list[str]:
        """The names of the metrics that had samples since ``since`` (epoch seconds)."""
        return self._names("label/__name__/values", {"start": _seconds(since)})

    def label_names(self, metric: str, since: float) -> list[str]:
        """The label names the series of ``metric`` carried since ``since``."""
        return self._names("labels", {"match[]": metric, "start": _seconds(since)})

    def label_values(self, label: str, metric: str, since: float) -> list[str]:
        """The values ``label`` took on the series of ``metric`` since ``since``: the
        label-values API, a few bytes per value (the series API would send every series)."""
        return self._names(f"label/{label}/values", {"match[]": metric,
                                                      "start": _seconds(since)})

    def _names(self, endpoint: str, params: dict[str, str]) -> list[str]:
        names = self._prometheus(endpoint, params, method="GET")["data"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise QueryError("bad answer", "expected a list of names")
        return names

    def targets(self, budget: ByteBudget | None = None, scrape_pool: str = "") -> dict:
        """The active scrape targets Prometheus holds now (of ``scrape_pool`` alone, where
        given), with their health and last error (``/api/v1/targets``; a backend that does
        not scrape has none)."""
        form = {"state": "active", **({"scrapePool": scrape_pool} if scrape_pool else {})}
        answer = self._ask("targets", form, method="GET", budget=budget)
        data = self._payload(answer, "GET")["data"]
        if not isinstance(data, dict):
            raise QueryError("bad answer", "expected the scrape targets")
        return data

    def status(self, endpoint: str) -> object:
        """The ``data`` of a GET to ``/api/v1/<endpoint>`` (build information, Thanos's
        stores): what a backend shows of itself."""
        return self._prometheus(endpoint, {}, method="GET")["data"]

    def _freshness(self) -> dict[str, str]:
        """Asks VictoriaMetrics not to hide its newest samples (1.79 honours ``nocache``, later
        versions ``latency_offset``); other backends ignore both."""
        offset = self.settings.latency_offset
        return {"latency_offset": offset, "nocache": "1"} if offset else {}

    def _distributed(self, recent: bool) -> Form:
        """What a distributed backend is asked besides the query (a plain Prometheus ignores
        it): raw data where it is recent (Thanos otherwise may answer from 5-minute
        downsampled blocks), the HA replicas merged, and whether a partial answer is taken
        (VictoriaMetrics cluster reads deny_partial_response)."""
        s = self.settings
        form: dict[str, str | list[str]] = {
            "max_source_resolution": "0s" if recent else "auto",
            "dedup": _flag(s.dedup), "partial_response": _flag(s.partial_response)}
        if not s.partial_response:
            form["deny_partial_response"] = "1"
        if s.replica_labels:
            form["replicaLabels[]"] = list(s.replica_labels)
        return form

    def query_range(self, promql: str, start: float, end: float, step: float,
                    budget: ByteBudget | None = None) -> Matrix:
        """Every series ``promql`` gives from ``start`` to ``end`` (epoch seconds), each
        evaluated every ``step`` seconds; the body counts against ``budget`` where one is
        given. VictoriaMetrics is asked to keep ``start`` as given (``nocache``: it moves
        the start of a long range onto its cache's grid otherwise)."""
        form = {"query": promql, "start": _seconds(start), "end": _seconds(end),
                "step": _seconds(step), "nocache": "1", **self._freshness(),
                **self._distributed(time.time() - start < RAW_SECONDS)}
        answer = self._ask("query_range", form, budget=budget)
        fast = range_matrix(answer.content)
        if fast is not None:
            return Matrix([Series(series.metric, series.values) for series in fast])
        payload = self._payload(answer, "POST")
        result = payload["data"].get("result")
        notes = Notes.of(payload.get("warnings"), payload.get("infos"), payload.get("isPartial"))
        try:
            return Matrix([Series(dict(item["metric"]),
                                  [(float(t), sample_value(v)) for t, v in item["values"]])
                           for item in result], notes)
        except (KeyError, TypeError, ValueError, OverflowError):
            raise QueryError("bad answer", "a range series without labels or values") from None

    def alertmanager_alerts(self, url: str, timeout: float) -> list[dict]:
        """The alerts the Alertmanager at ``url`` holds: active, silenced and inhibited."""
        params = {"active": "true", "silenced": "true", "inhibited": "true"}
        answer = self._send("GET", url, "/api/v2/alerts", params, timeout)
        alerts = _json(answer, ALERTMANAGER_ANSWER)
        if not isinstance(alerts, list) or not all(isinstance(a, dict) for a in alerts):
            raise QueryError("bad answer", ALERTMANAGER_ANSWER)
        for alert in alerts:
            for part in ("labels", "annotations"):
                if isinstance(alert.get(part), dict):
                    alert[part] = plain_labels(alert[part], 1000)
        return alerts

    def clean(self, text: str, *urls: str) -> str:
        """``text`` with the credentials, and any user:password@ in a URL, taken out."""
        found = [urlparse(url).password for url in urls]
        for secret in [*self._secrets, *(s for s in found if s)]:
            text = text.replace(secret, "***")
        return without_userinfo(text)

    # -- the exchange ------------------------------------------------------------------

    def _prometheus(self, endpoint: str, form: Form, method: str = "POST") -> dict:
        """The whole answer (``data``, and ``warnings`` where the server gave them)."""
        return self._payload(self._ask(endpoint, form, method), method)

    def _ask(self, endpoint: str, form: Form, method: str = "POST",
             budget: ByteBudget | None = None) -> httpx.Response:
        if not self.settings.url:
            raise QueryError("not configured", "no Prometheus URL")
        return self._send(method, self.settings.url, f"/api/v1/{endpoint}", form,
                          self.settings.timeout_seconds, budget)

    def _payload(self, answer: httpx.Response, method: str,
                 originals: dict[str, str] | None = None) -> dict:
        """The answer read as any JSON, checked to be a Prometheus one, its labels plain
        (cut while decoding: prom_decode)."""
        try:
            payload = decoded_answer(answer.content, originals)
        except ValueError:
            raise QueryError("bad answer", PROMETHEUS_ANSWER) from None
        if isinstance(payload, dict) and payload.get("status") == "error":
            raise QueryError("query failed", self.clean(str(payload.get("error", ""))[:2000]))
        if not (isinstance(payload, dict) and payload.get("status") == "success"
                and isinstance(payload.get("data"), (dict, list))):
            raise QueryError("bad answer", PROMETHEUS_ANSWER)
        if method == "POST" and not isinstance(payload["data"], dict):
            raise QueryError("bad answer", PROMETHEUS_ANSWER)
        data = payload["data"]
        if isinstance(data, list):  # names: metric or label names, plain text too
            payload["data"] = [plain(n, 256) if isinstance(n, str) else n for n in data]
        return payload

    def _send(self, method: str, base: str, path: str, form: Form, timeout: float,
              budget: ByteBudget | None = None) -> httpx.Response:
        """The exchange, in one of the client's workers so that its deadline holds at every
        stage: httpx's timeouts are per read, and a server trickling its header lines or its
        body a few bytes at a time never trips one. The deadline counts from when a worker
        takes the exchange up. Past it the exchange is abandoned: its pool is retired
        (http_pool), the other exchanges' connections left as they are. An error comes back
        without the worker's traceback: its frames would keep what they read alive as long
        as the error."""
        budget = budget or ByteBudget(MAX_BODY_BYTES)
        lease = Lease()

        def exchange() -> httpx.Response:
            try:
                return self._exchange(method, base, path, form, timeout, budget, lease)
            finally:
                self._pools.give_back(lease)

        job = self._workers.submit(exchange)
        job.started.wait(timeout)  # every worker busy: wait at most one deadline for one
        if not job.done.wait(timeout):
            job.cancel()
            self._pools.abandon(lease)
            raise QueryError("timed out", f"no answer in {timeout:g} s")
        try:
            return job.result()
        except QueryError as error:
            raise error.bare() from None

    def _exchange(self, method: str, base: str, path: str, form: Form, timeout: float,
                  budget: ByteBudget, lease: Lease) -> httpx.Response:
        deadline = time.monotonic() + timeout
        try:
            client = self._pools.take(lease)
            if client is None:  # abandoned before a worker took it up
                raise QueryError("timed out", f"no answer in {timeout:g} s")
            data, params = (form, None) if method == "POST" else (None, form)
            asked = client.build_request(method, f"{base.rstrip('/')}{path}", data=data,
                                         params=params, timeout=timeout)
            answer = read_body(client.send(asked, stream=True), deadline, MAX_BODY_BYTES,
                               budget)
        except httpx.TimeoutException:
            raise QueryError("timed out", f"no answer in {timeout:g} s") from None
        except BodyTooSlow:
            raise QueryError("timed out", f"the answer took more than {timeout:g} s") from None
        except BodyTooLarge as error:
            raise QueryError(TOO_LARGE, str(error)) from None
        except BodyEncoding as error:
            raise QueryError("bad answer", str(error)) from None
        except httpx.ConnectError as error:
            if _is_tls(error):
                raise QueryError("TLS", self.clean(_tls_reason(error), base)) from None
            raise QueryError(_connect_kind(str(error)), self.clean(base, base)) from None
        except (httpx.HTTPError, httpx.InvalidURL, ssl.SSLError, OSError) as error:
            if _is_tls(error):
                raise QueryError("TLS", self.clean(_tls_reason(error), base)) from None
            raise QueryError("request failed", self.clean(_first_line(error), base)) from None
        if not answer.is_success:
            raise QueryError(f"HTTP {answer.status_code}", self.clean(_reason(answer), base),
                             retry_after(answer.headers.get("retry-after")))
        if VICTORIA_HEADER in answer.headers:
            self.backend = VICTORIA_METRICS
        return answer

    def _new_pool(self) -> httpx.Client:
        """A connection pool; opened by the first request, not in __init__, so a CA bundle
        that cannot be read is a failed request (TLS) rather than a crash."""
        settings = self.settings
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": ENCODINGS}
        if settings.bearer_token:
            headers["Authorization"] = f"Bearer {settings.bearer_token.value}"
        if settings.tenant:
            headers[TENANT_HEADER] = settings.tenant
        auth = (settings.username, settings.password.value) if settings.username else None
        return httpx.Client(headers=headers, auth=auth, verify=_verify(settings),
                            follow_redirects=True)


def shown_url(url: str) -> str:
    """``url`` as it may be shown: any ``user:password@`` replaced by ``***@``."""
    return plain(without_userinfo(url), 300)


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (a number or an HTTP date), at most MAX_RETRY_AFTER."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def _basic(username: str, password: str) -> str:
    """The Authorization value of HTTP basic auth: an error page may echo it back."""
    if not username:
        return ""
    return base64.b64encode(f"{username}:{password}".encode()).decode()


def _verify(settings: PrometheusSettings) -> ssl.SSLContext | bool:
    if settings.insecure:
        return False
    if settings.ca_bundle:
        return ssl.create_default_context(cafile=str(settings.ca_bundle))
    return True


def _json(answer: httpx.Response, what: str) -> object:
    try:
        return answer.json()
    except ValueError:
        raise QueryError("bad answer", what) from None


def _reason(answer: httpx.Response) -> str:
    """Prometheus's ``error`` field, else the body's first line: what went wrong, short."""
    try:
        reason = answer.json().get("error")
    except (ValueError, AttributeError):
        reason = None
    # Long enough that a secret in it is whole when ``clean`` looks; QueryError cuts it.
    if isinstance(reason, str):
        return reason[:2000]
    lines = answer.text[:10_000].strip().splitlines()
    return lines[0][:2000] if lines else ""


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _seconds(value: float) -> str:
    """Seconds as Prometheus reads them: 1800000000, 4, 0.5 (never 1.8e+09)."""
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _connect_kind(text: str) -> str:
    return "connection refused" if "refused" in text.lower() else "cannot connect"


def _is_tls(error: BaseException) -> bool:
    cause = error.__cause__ or error.__context__
    return isinstance(error, ssl.SSLError) or isinstance(cause, ssl.SSLError) or (
        "SSL" in str(error) or "CERTIFICATE" in str(error))


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0][:200] if str(error) else error.__class__.__name__


_VERIFY_FAILED = re.compile(r"certificate verify failed: ([^(]+)")
# What an untrusted certificate needs; a name mismatch or an expired one is the server's to fix.
TLS_FIX = ("trust its CA: prometheus.ca_bundle or RANKTOP_CA_BUNDLE = the CA's PEM file "
           "(--insecure skips the check)")


def _tls_reason(error: BaseException) -> str:
    """Why the server's certificate was refused, and how to trust it where that is the fix."""
    text = _first_line(error)
    failed = _VERIFY_FAILED.search(text)
    if failed is None:
        return text
    reason = failed.group(1).strip()
    if "self-signed" in reason or "issuer" in reason:
        return f"certificate not trusted ({reason}); {TLS_FIX}"
    return f"certificate refused ({reason})"
