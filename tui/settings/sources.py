"""Settings of the data sources: where Prometheus is, how to authenticate, how ranks are named.

Secrets (a bearer token, a password) come from a file or an environment variable, never
from the config file itself, and are held in ``Secret`` so they never print. A
``user:password@`` in the Prometheus URL is taken out of the URL as it is read: the user
becomes ``username``, the password a Secret, and the URL kept holds neither.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from .reader import ConfigError, Reader, control_in

# Environment variables that set config keys (flags override them, they override files).
ENVIRONMENT = {
    "RANKTOP_PROMETHEUS_URL": ("prometheus", "url", str),
    "RANKTOP_JOB": ("prometheus", "job", str),
    "RANKTOP_DCGM_SELECTOR": ("prometheus", "dcgm_selector", str),
    "RANKTOP_BEARER_TOKEN_FILE": ("prometheus", "bearer_token_file", str),
    "RANKTOP_USERNAME": ("prometheus", "username", str),
    "RANKTOP_PASSWORD_FILE": ("prometheus", "password_file", str),
    "RANKTOP_CA_BUNDLE": ("prometheus", "ca_bundle", str),
    "RANKTOP_TENANT": ("prometheus", "tenant", str),
    "RANKTOP_LATENCY_OFFSET": ("prometheus", "latency_offset", str),
    "RANKTOP_INSECURE": ("prometheus", "insecure", bool),
    "RANKTOP_RANK_MAP": ("ranks", "rank_map_file", str),
    "RANKTOP_LOGS": ("logs", "spec", str),
    "RANKTOP_ALERTMANAGER_URL": ("alertmanager", "url", str),
    "RANKTOP_REFRESH_SECONDS": ("display", "refresh_seconds", float),
    "RANKTOP_UTC": ("display", "utc", bool),
}
TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")
_DURATION = re.compile(r"^\d+(ms|s|m)$")
_USERINFO = re.compile(r"//[^/@\s]*@")


class Secret:
    """A credential: usable as ``.value``, shown everywhere else as ***."""

    def __init__(self, value: str = "") -> None:
        self.value = value

    def __bool__(self) -> bool:
        return bool(self.value)

    def __repr__(self) -> str:
        return "'***'" if self.value else "''"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


@dataclass(frozen=True)
class PrometheusSettings:
    url: str  # "" when no Prometheus is configured
    job: str
    timeout_seconds: float
    dcgm_selector: str  # extra label matchers for DCGM series, e.g. namespace="training"
    bearer_token: Secret
    username: str
    password: Secret
    ca_bundle: Path | None
    insecure: bool
    tenant: str = ""  # Mimir / Cortex tenant, sent as X-Scope-OrgID
    password_file: Path | None = None  # where the password was read from, if from a file
    latency_offset: str = ""  # VictoriaMetrics: hide only this much of the newest data
    # Distributed backends (Thanos, VictoriaMetrics cluster, Mimir): answer with the stores
    # that did answer (True: said as partial) or fail the query; merge HA replicas by these
    # replica labels (() : the querier's own).
    partial_response: bool = True
    dedup: bool = True
    replica_labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class RankSettings:
    """How the job's own metrics name ranks, and where else a rank map can come from."""

    step_metric: str
    job_label: str
    rank_label: str
    host_label: str
    local_gpu_label: str
    uuid_label: str
    rank_map_file: Path | None
    slurm_nodelist: str
    gpus_per_node: int
    stale_after_seconds: float
    pod_label: str = "pod"  # on Kubernetes: the pod of the job's series (its node from DCGM)


def environment_overrides(environ: Mapping[str, str]) -> tuple[dict, dict[str, str]]:
    """Config keys set through ``RANKTOP_*`` variables, and where each came from."""
    overrides: dict[str, dict] = {}
    provenance: dict[str, str] = {}
    for name, (table, key, kind) in ENVIRONMENT.items():
        if name not in environ:
            continue
        overrides.setdefault(table, {})[key] = _convert(name, environ[name], kind)
        provenance[f"{table}.{key}"] = f"environment variable {name}"
    return overrides, provenance


def _convert(name: str, text: str, kind: type) -> object:
    if kind is bool:
        if text.strip().lower() not in TRUE_WORDS + FALSE_WORDS:
            raise ConfigError(f"environment variable {name}: must be true or false (got {text!r})")
        return text.strip().lower() in TRUE_WORDS
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"environment variable {name}: must be a number (got {text!r})"
                              ) from None
    return text


def without_userinfo(text: str) -> str:
    """``text`` with any ``user:password@`` of a URL in it replaced by ``***@``."""
    return _USERINFO.sub("//***@", text)


def http_url(reader: Reader, key: str) -> str:
    """An http(s) URL with a host (and a port that can be), without its trailing "/"; ""
    when not set. A user or password in it is refused: only Prometheus's URL may carry
    them (``prometheus_address``). What is wrong is said about the URL as given, less any
    password."""
    url, user, password = _split_url(reader, key)
    if user or password:
        raise reader.fail(key, "must not hold a user or password; Alertmanager is asked with "
                               "[prometheus]'s credentials")
    return url


def _split_url(reader: Reader, key: str) -> tuple[str, str, str]:
    """The URL without its userinfo, and the user and password that were in it."""
    text = reader.optional_text(key)
    if not text:
        return "", "", ""
    problem = _url_problem(text)
    if problem:
        raise reader.fail(key, f"{problem} (got {without_userinfo(text)!r})")
    parts = urlsplit(text)
    if "@" not in parts.netloc:
        return text.rstrip("/"), "", ""
    host = parts.netloc.rpartition("@")[2]
    url = urlunsplit(parts._replace(netloc=host)).rstrip("/")
    return url, unquote(parts.username or ""), unquote(parts.password or "")


def _url_problem(text: str) -> str:
    try:
        parsed = urlsplit(text)
        port = parsed.port
    except ValueError as error:  # "Invalid IPv6 URL", "Port out of range 0-65535", ...
        if "port" in str(error).lower():
            return "its port must be a number from 1 to 65535"
        return f"is not a valid URL ({error})"
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return "must be an http:// or https:// URL with a host"
    if port == 0:
        return "its port must be a number from 1 to 65535"
    if any(c.isspace() for c in text):
        return "must not contain spaces"
    return ""


def prometheus_settings(reader: Reader, environ: Mapping[str, str]) -> PrometheusSettings:
    url, username, (password, password_file) = _credentials(reader, environ)
    return PrometheusSettings(
        url=url,
        job=reader.optional_text("job"),
        timeout_seconds=reader.number("timeout_seconds", 0.5, 300),
        dcgm_selector=reader.optional_text("dcgm_selector").strip().strip("{}"),
        bearer_token=_secret(reader, "bearer_token_file",
                             environ.get("RANKTOP_BEARER_TOKEN"))[0],
        username=username,
        password=password,
        password_file=password_file,
        ca_bundle=_existing_file(reader, "ca_bundle"),
        insecure=reader.flag("insecure"),
        tenant=_header_value(reader, "tenant"),
        latency_offset=_duration(reader, "latency_offset"),
        partial_response=reader.flag("partial_response", True),
        dedup=reader.flag("dedup", True),
        replica_labels=reader.texts("replica_labels"),
    )


def _credentials(reader: Reader, environ: Mapping[str, str]
                 ) -> tuple[str, str, tuple[Secret, Path | None]]:
    """Prometheus's URL, user and password: a ``user:password@`` in the URL is moved out
    of it, unless a user or password is given otherwise too (then the URL's is refused,
    without showing it)."""
    url, url_user, url_password = _split_url(reader, "url")
    username = reader.optional_text("username")
    password = _secret(reader, "password_file", environ.get("RANKTOP_PASSWORD"))
    if not (url_user or url_password):
        return url, username, password
    if username or password[0]:
        raise reader.fail("url", "holds a user or password, and so do username and the "
                                 "password file or variable: give them once (the values "
                                 "are not shown)")
    if control_in(url_user + url_password) is not None:
        raise reader.fail("url", "its user or password holds a control character")
    return url, url_user, (Secret(url_password), None)


def rank_settings(reader: Reader, environ: Mapping[str, str]) -> RankSettings:
    return RankSettings(
        step_metric=reader.text("step_metric"),
        job_label=reader.text("job_label"),
        rank_label=reader.text("rank_label"),
        host_label=reader.text("host_label"),
        local_gpu_label=reader.text("local_gpu_label"),
        uuid_label=reader.text("uuid_label"),
        rank_map_file=_existing_file(reader, "rank_map_file"),
        slurm_nodelist=reader.optional_text("slurm_nodelist")
        or environ.get("SLURM_JOB_NODELIST", ""),
        gpus_per_node=reader.integer("gpus_per_node", 1, 64),
        stale_after_seconds=reader.number("stale_after_seconds", 1, 86400),
        pod_label=reader.text("pod_label"),
    )


def _duration(reader: Reader, key: str) -> str:
    text = reader.optional_text(key).strip()
    if text and not _DURATION.match(text):
        raise reader.fail(key, f'must be a duration such as "1s" or "500ms" (got {text!r})')
    return text


def _header_value(reader: Reader, key: str) -> str:
    text = reader.optional_text(key).strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise reader.fail(key, "must not hold control characters")
    return text


def _existing_file(reader: Reader, key: str) -> Path | None:
    text = reader.optional_text(key)
    if not text:
        return None
    path = Path(text).expanduser()
    if not path.is_file():
        raise reader.fail(key, f"no such file: {path}")
    return path


def _secret(reader: Reader, file_key: str, direct: str | None
            ) -> tuple[Secret, Path | None]:
    """A secret from its variable, else from the file the config names (and that file)."""
    if direct:
        return _one_line_secret(reader, file_key, direct.strip(), "the variable holds"), None
    path = _existing_file(reader, file_key)
    if path is None:
        return Secret(), None
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise reader.fail(file_key, f"cannot read {path}: {error.__class__.__name__}") from None
    return _one_line_secret(reader, file_key, text, f"{path} holds"), path


def _one_line_secret(reader: Reader, key: str, text: str, where: str) -> Secret:
    """A token or password is one line of printable text; the error never shows it."""
    if "\n" in text or "\r" in text or control_in(text) is not None:
        lines = len(text.splitlines())
        raise reader.fail(key, f"{where} {lines} lines or control characters; a secret must be "
                               "one line of printable text (its value is not shown)")
    return Secret(text)
