"""`ranktop init`: a first config file from what the backend holds.

It polls once as the console would, so discovery looks for the job's metrics where the
configured ones are absent, shows the config that reads them, then writes it to the XDG
config path (or ``--config FILE``), with the logs and dumps given (``--logs``,
``--flight-recorder``). A file that exists is merged with it (the new keys win), after
what it held is kept in a backup beside it (``config.toml.bak``); the merged file is
checked to load before it is written.

A password is never printed nor put in the config: one read from a file is referred to by
that file's path; one given otherwise (the URL's ``user:password@``, RANKTOP_PASSWORD) is
written to ``prometheus-password`` beside the config, readable by its owner only, and the
config refers to that.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TextIO

from ..core.ranks import FROM_JOB
from ..settings.config import Settings, load_settings
from ..settings.paths import user_config_file
from ..settings.reader import ConfigError, read_toml
from ..settings.sources import PrometheusSettings
from ..settings.writer import FileExists, check_new, merged, replace_kept, toml_text, write_new
from ..sources.prometheus import suggest
from ..sources.prometheus.client import VICTORIA_METRICS, QueryError
from ..sources.prometheus.source import PrometheusSource

PASSWORD_FILE = "prometheus-password"
HEADER = ("# ranktop's config, written by `ranktop init` from what {url} holds.\n"
          "# Every other key keeps its default (ranktop --help, config/default.toml).\n\n")


def init_config(settings: Settings, target: Path, out: TextIO | None = None,
                err: TextIO | None = None) -> int:
    """Show the config for the job ``settings`` name, then write it to ``target``."""
    out, err = out or sys.stdout, err or sys.stderr
    prom = settings.prometheus
    if not prom.url:
        print("ranktop init: no Prometheus given (--prometheus URL or "
              "RANKTOP_PROMETHEUS_URL)", file=err)
        return 2
    source = PrometheusSource(settings)
    try:
        source.poll_now()
    except QueryError as error:
        print(f"ranktop init: cannot read {prom.url}: {error}", file=err)
        return 1
    finally:
        source.client.close()
    found = source.finder.discovery
    secret_file = None if prom.password_file else target.with_name(PASSWORD_FILE)
    table = {"prometheus": {"url": prom.url, "job": prom.job, **_auth_keys(prom, secret_file)}}
    for name, keys in suggest.suggestion(found, settings).items():
        table[name] = {**table.get(name, {}), **keys}
    if not table["prometheus"]["job"]:
        del table["prometheus"]["job"]
    if source.client.backend == VICTORIA_METRICS and not prom.latency_offset:
        table["prometheus"]["latency_offset"] = "1s"  # its newest samples, not 30 s late
    for key, value in (("spec", settings.log_spec), ("flight_recorder", settings.flight_recorder)):
        if value:
            table.setdefault("logs", {})[key] = value
    if found.other_jobs:
        print(f"other jobs found: {', '.join(found.other_jobs)} (--job NAME picks one)",
              file=out)
    if target.is_file():
        return _merge_into(target, table, prom, secret_file, out, err, _what(source, found))
    text = HEADER.format(url=prom.url) + toml_text(table)
    print(f"{_what(source, found)}; the config:\n\n{text}", file=out)
    try:
        _write(target, text, prom.password.value, secret_file)
    except (FileExists, OSError) as error:
        print(f"ranktop init: cannot write {target}: {_why(error)}", file=err)
        return 1
    print(f"written to {target}; {_reads_it(target)}", file=out)
    return 0


def _merge_into(target: Path, table: dict, prom: PrometheusSettings, secret_file: Path | None,
                out: TextIO, err: TextIO, what: str) -> int:
    """``table`` merged into the config file ``target``, which is kept in a backup first."""
    try:
        text = HEADER.format(url=prom.url) + toml_text(merged(read_toml(target), table))
        _check_loads(target, text)
    except (ConfigError, OSError) as error:
        print(f"ranktop init: {target} left as it was: {_why(error)}", file=err)
        return 1
    print(f"{what}; {target} becomes:\n\n{text}", file=out)
    try:
        if prom.password and secret_file is not None and not secret_file.exists():
            write_new(secret_file, prom.password.value + "\n")
        backup = replace_kept(target, text)
    except (FileExists, OSError) as error:
        print(f"ranktop init: {target} left as it was: {_why(error)}", file=err)
        return 1
    print(f"merged into {target} (what it held is in {backup}); {_reads_it(target)}",
          file=out)
    return 0


def _check_loads(target: Path, text: str) -> None:
    """ConfigError unless ``text`` loads as a config file (checked in a scratch copy)."""
    with tempfile.TemporaryDirectory(prefix="ranktop-init-") as scratch:
        trial = Path(scratch) / target.name
        trial.write_text(text, encoding="utf-8")
        load_settings(trial, environ={})


def _reads_it(target: Path) -> str:
    if target == user_config_file():
        return "`ranktop` reads it from now on (check it with `ranktop check-config`)"
    return (f"`ranktop --config {target}` reads it (check it with "
            f"`ranktop check-config --config {target}`)")


def _why(error: Exception) -> str:
    return str(getattr(error, "strerror", None) or error)


def _auth_keys(prom: PrometheusSettings, secret_file: Path | None) -> dict[str, str]:
    """The config's keys for basic auth: the user, and the file that holds the password."""
    keys = {"username": prom.username} if prom.username else {}
    if prom.password:
        keys["password_file"] = str(prom.password_file or secret_file)
    return keys


def _write(target: Path, text: str, password: str, secret_file: Path | None) -> None:
    """The config, and first the password's own file where one is to be written; neither
    over a file that exists."""
    check_new(target)
    if password and secret_file is not None:
        write_new(secret_file, password + "\n")
    write_new(target, text)


def _what(source: PrometheusSource, found) -> str:
    if found.candidates and suggest.chosen(found):
        names = ", ".join(c.name for c in suggest.chosen(found).values())
        return f"found the job's metrics: {names}"
    if found.error:
        return f"could not look for the job's metrics ({found.error})"
    if not found.candidates and source.rank_map.source == FROM_JOB:
        return "the configured job metrics are there"
    return "found nothing that looks like the job's metrics"
