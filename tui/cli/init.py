"""`ranktop init`: a first config file from what the backend holds.

It polls once as the console would, so discovery looks for the job's metrics where the
configured ones are absent, shows the config that reads them, then writes it to the XDG
config path (or ``--config FILE``). A file that exists is never overwritten: the lines are
shown to paste by hand, and the exit status is 1.

A password is never printed nor put in the config: one read from a file is referred to by
that file's path; one given otherwise (the URL's ``user:password@``, RANKTOP_PASSWORD) is
written to ``prometheus-password`` beside the config, readable by its owner only, and the
config refers to that.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from ..core.ranks import FROM_JOB
from ..settings.config import Settings
from ..settings.sources import PrometheusSettings
from ..settings.writer import FileExists, check_new, toml_text, write_new
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
    text = HEADER.format(url=prom.url) + toml_text(table)
    if found.other_jobs:
        print(f"other jobs found: {', '.join(found.other_jobs)} (--job NAME picks one)",
              file=out)
    print(f"{_what(source, found)}; the config:\n\n{text}", file=out)
    try:
        _write(target, text, prom.password.value, secret_file)
    except FileExists as error:
        print(f"ranktop init: not written: {error}; paste the lines above into it", file=err)
        return 1
    except OSError as error:
        print(f"ranktop init: cannot write {target}: {error.strerror or error}", file=err)
        return 1
    print(f"written to {target}; `ranktop` now reads it (check it with "
          "`ranktop check-config`)", file=out)
    return 0


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
