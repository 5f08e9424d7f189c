"""`ranktop jobs`: every job the backend holds, worst first, as a table or JSON; exit 0 when
every job is healthy, 1 when any is not or the list cannot be read (as `report` does)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from ..core.fleet import JobRow, ranked, unhealthy
from ..core.fleet_cells import COLUMNS, cells, cut, headline, jobs_document
from ..core.moment import shown_full
from ..core.text import plain
from ..settings.config import Settings
from ..settings.paths import version
from ..sources.prometheus.client import QueryError, shown_url
from ..sources.prometheus.fleet import FleetRead, FleetReader

# a column cut past this many characters
WIDEST = {"job": 40, "worst": 28, "owner": 16, "shares": 40}


def list_jobs(settings: Settings, out: TextIO, err: TextIO, as_json: bool,
              reader: FleetReader | None = None) -> int:
    if not settings.prometheus.url:
        print("ranktop jobs: no Prometheus given (--prometheus URL or "
              "RANKTOP_PROMETHEUS_URL)", file=err)
        return 2
    try:
        reader = reader or FleetReader(settings)
    except ValueError as error:  # a label or metric name PromQL cannot hold
        print(f"ranktop jobs: configuration error: {plain(str(error), 300)}", file=err)
        return 2
    try:
        read = reader.read()
    except QueryError as error:
        print(f"ranktop jobs: cannot list the jobs: {error}", file=err)
        return 1
    finally:
        reader.close()
    rows = ranked(read.jobs, read.time, reader.limits)
    source = f"Prometheus {shown_url(settings.prometheus.url)}"
    if as_json:
        document = jobs_document(rows, time=read.time, source=source, recorded=read.recorded,
                                 errors=read.errors, version=version())
        out.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(as_text(rows, read, source))
    return 1 if unhealthy(rows) or read.errors else 0


def as_text(rows: Sequence[JobRow], read: FleetRead, source: str) -> str:
    """A header line, then one line per job under column titles."""
    said = "from the recording rules" if read.recorded else "from the raw series"
    lines = [f"{headline(rows)} · {source} · {shown_full(read.time)} · {said}"]
    lines += [f"  not answered: {key}: {plain(why, 200)}"
              for key, why in sorted(read.errors.items())]
    table = [{column: column.upper() for column in COLUMNS},
             *(_cut(cells(row)) for row in rows)]
    widths = {column: max(len(line[column]) for line in table) for column in COLUMNS}
    for line in table:
        lines.append("  ".join(line[c].ljust(widths[c]) for c in COLUMNS).rstrip())
    return "\n".join(lines) + "\n"


def _cut(words: dict[str, str]) -> dict[str, str]:
    return {column: cut(text, WIDEST.get(column, len(text))) for column, text in words.items()}
