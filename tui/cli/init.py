"""`ranktop init`: a first config file from what the backend holds.

It polls once as the console would, so discovery looks for the job's metrics where the
configured ones are absent, shows the config that reads them, then writes it to the XDG
config path (or ``--config FILE``). A file that exists is never overwritten: the lines are
shown to paste by hand, and the exit status is 1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from ranktop.tui.core.ranks import FROM_JOB
from ranktop.tui.settings.config import Settings
from ranktop.tui.settings.writer import FileExists, toml_text, write_new
from ranktop.tui.sources import suggest
from ranktop.tui.sources.prom_client import VICTORIA_METRICS, QueryError
from ranktop.tui.sources.prometheus import PrometheusSource

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
    table = {"prometheus": {"url": prom.url, "job": prom.job}}
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
        write_new(target, text)
    except FileExists as error:
        print(f"ranktop init: not written: {error}; paste the lines above into it", file=err)
        return 1
    except OSError as error:
        print(f"ranktop init: cannot write {target}: {error.strerror or error}", file=err)
        return 1
    print(f"written to {target}; `ranktop` now reads it (check it with "
          "`ranktop check-config`)", file=out)
    return 0


def _what(source: PrometheusSource, found) -> str:
    if found.candidates and suggest.chosen(found):
        names = ", ".join(c.name for c in suggest.chosen(found).values())
        return f"found the job's metrics: {names}"
    if found.error:
        return f"could not look for the job's metrics ({found.error})"
    if not found.candidates and source.rank_map.source == FROM_JOB:
        return "the configured job metrics are there"
    return "found nothing that looks like the job's metrics"
