"""A blocking PromQL client (prometheus-api-client) whose failures say what they are.

Every failure becomes a ``QueryError`` with a short kind ("connection refused", "timed out",
"HTTP 503", "TLS", ...) and a message free of credentials. Calls block: the source runs them
in a thread.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from typing import NamedTuple
from urllib.parse import urlparse

import requests
from prometheus_api_client import PrometheusApiClientException, PrometheusConnect
from ranktop.tui.settings.sources import PrometheusSettings
from urllib3.util.retry import Retry

USER_AGENT = "ranktop"


class QueryError(Exception):
    """A query that did not answer; ``kind`` is what the header calls it."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind
        self.message = message


class Sample(NamedTuple):
    labels: Mapping[str, str]
    value: float
    time: float


class Vector:
    """An instant vector as Prometheus sent it, read sample by sample without copying."""

    def __init__(self, result: list) -> None:
        self._result = result

    def __len__(self) -> int:
        return len(self._result)

    def __bool__(self) -> bool:
        return bool(self._result)

    def __iter__(self) -> Iterator[Sample]:
        try:
            for item in self._result:
                stamp, text = item["value"]
                yield Sample(item["metric"], float(text), float(stamp))
        except (KeyError, TypeError, ValueError):
            raise QueryError("bad answer", "a sample without labels or value") from None


class PromClient:
    """Instant queries against one Prometheus-compatible API."""

    def __init__(self, settings: PrometheusSettings) -> None:
        self.settings = settings
        session = requests.Session()
        session.verify = False if settings.insecure else str(settings.ca_bundle or True)
        if session.verify == "True":
            session.verify = True
        headers = {"User-Agent": USER_AGENT}
        if settings.bearer_token:
            headers["Authorization"] = f"Bearer {settings.bearer_token.value}"
        auth = (settings.username, settings.password.value) if settings.username else None
        # No retries inside a poll: the next poll is the retry, and a poll must stay short.
        self._prometheus = PrometheusConnect(
            url=settings.url, headers=headers, auth=auth, session=session,
            retry=Retry(total=0), timeout=settings.timeout_seconds, method="POST",
        )
        self._secrets = [s for s in (settings.bearer_token.value, settings.password.value) if s]
        password = urlparse(settings.url).password
        if password:
            self._secrets.append(password)

    def query(self, promql: str) -> Vector:
        """The instant vector ``promql`` evaluates to now."""
        try:
            result = self._prometheus.custom_query(promql)
        except requests.exceptions.SSLError as error:
            raise QueryError("TLS", self._clean(_first_line(error))) from None
        except requests.exceptions.Timeout:
            raise QueryError("timed out", f"no answer in {self.settings.timeout_seconds:g} s"
                             ) from None
        except requests.exceptions.ConnectionError as error:
            text = str(error)
            kind = "connection refused" if "refused" in text.lower() else "cannot connect"
            raise QueryError(kind, self._clean(self.settings.url)) from None
        except PrometheusApiClientException as error:
            raise _http_error(self._clean(str(error))) from None
        except requests.exceptions.JSONDecodeError:
            raise QueryError("bad answer", "not a Prometheus API response") from None
        except requests.exceptions.RequestException as error:
            raise QueryError("request failed", self._clean(_first_line(error))) from None
        except ValueError:
            raise QueryError("bad answer", "not a Prometheus API response") from None
        return _vector(result)

    def query_range(self, promql: str, start: float, end: float, step: float
                    ) -> list[tuple[float, float]]:
        """The first series of a range query, as (time, value) pairs."""
        try:
            result = self._prometheus.custom_query_range(
                promql, start_time=datetime.fromtimestamp(start, tz=timezone.utc),
                end_time=datetime.fromtimestamp(end, tz=timezone.utc), step=f"{step:g}s")
        except (requests.exceptions.RequestException, PrometheusApiClientException,
                ValueError) as error:
            raise QueryError("range query failed", self._clean(_first_line(error))) from None
        if not isinstance(result, list) or not result:
            return []
        try:
            return [(float(t), float(v)) for t, v in result[0]["values"]]
        except (KeyError, TypeError, ValueError):
            raise QueryError("bad answer", "a range series without values") from None

    def _clean(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return re.sub(r"//[^/@\s]+@", "//***@", text)


def _vector(result: object) -> Vector:
    if not isinstance(result, list):
        raise QueryError("bad answer", "expected an instant vector")
    return Vector(result)


def _http_error(text: str) -> QueryError:
    match = re.search(r"HTTP Status Code (\d+)", text)
    code = match.group(1) if match else "error"
    detail = re.search(r'"error":\s*"([^"]{0,160})', text)
    return QueryError(f"HTTP {code}", detail.group(1) if detail else "")


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0][:200] if str(error) else error.__class__.__name__
