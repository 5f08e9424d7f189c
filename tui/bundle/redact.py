"""The settings and the queries of a bundle, as they may be handed over: no bearer token, no
password, no user:password in a URL, and any text that holds a configured secret has it
replaced by ``***`` (a log line or an alert can hold one as well as a setting)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from enum import Enum
from pathlib import Path
from urllib.parse import urlencode

from ..settings.config import Settings
from ..settings.sources import Secret, without_userinfo

HIDDEN = "***"


def secrets_of(settings: Settings) -> list[str]:
    """Every secret the settings hold, longest first (so none is left half replaced)."""
    prometheus = settings.prometheus
    found = [] if prometheus is None else [prometheus.bearer_token.value,
                                            prometheus.password.value]
    return sorted({s for s in found if s}, key=len, reverse=True)


def scrubbed(text: str, secrets: Iterable[str]) -> str:
    """``text`` without any of ``secrets`` nor a URL's user:password."""
    for secret in secrets:
        text = text.replace(secret, HIDDEN)
    return without_userinfo(text)


def settings_document(settings: Settings) -> dict:
    """The settings as plain JSON values, every secret shown as *** (or "" when unset)."""
    return _plain(settings, secrets_of(settings))


def queries_document(settings: Settings, queries: Mapping[str, str], moment: float) -> dict:
    """The queries of one poll, each with the instant query that gives its answer at
    ``moment``; the backend's address without credentials."""
    backend = settings.prometheus.url if settings.prometheus else ""
    secrets = secrets_of(settings)
    address = scrubbed(backend, secrets)
    return {
        "backend": address or None,
        "time": moment,
        "queries": [{"for": purpose, "query": scrubbed(query, secrets),
                     "url": f"{address}/api/v1/query?"
                            + urlencode({"query": scrubbed(query, secrets), "time": moment})
                     if address else None}
                    for purpose, query in queries.items()],
    }


def _plain(value: object, secrets: list[str]) -> object:
    if isinstance(value, Secret):
        return HIDDEN if value else ""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name), secrets)
                for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v, secrets) for v in value]
    if isinstance(value, Enum):
        return _plain(value.value, secrets)
    if isinstance(value, Path):
        return scrubbed(str(value), secrets)
    if isinstance(value, str):
        return scrubbed(value, secrets)
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else str(value)  # JSON has no inf
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return scrubbed(str(value), secrets)
