"""The words of each column of the jobs list, for the screen and ``ranktop jobs`` alike; and
the list as a versioned document (``ranktop jobs --json``, docs/jobs-schema.json).

Job names and owners come from label values: made plain here (no control characters, cut
to a length), never shown as they came.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .document import finite
from .fleet import JobRow, unhealthy
from .text import plain

JOBS_SCHEMA_VERSION = 1
NAME_CHARS = 60
COLUMNS = ("job", "ranks", "progress", "worst", "alerts", "goodput", "owner", "shares")
UNKNOWN = "?"
# The free-text columns cut, in this order, for the list to fit a narrow terminal; no column
# cut below NARROWEST characters.
SHRINKING = ("shares", "owner", "job")
NARROWEST = 12


def cells(row: JobRow) -> dict[str, str]:
    """Each column's words for one job."""
    f = row.facts
    return {"job": plain(f.name, NAME_CHARS), "ranks": ranks(row),
            "progress": progress(row), "worst": worst(row), "alerts": alerts(row),
            "goodput": goodput(f.goodput), "owner": plain(f.owner, NAME_CHARS),
            "shares": shares(row)}


def ranks(row: JobRow) -> str:
    f = row.facts
    up = UNKNOWN if f.ranks_up is None else str(f.ranks_up)
    return up if f.ranks_expected is None else f"{up}/{f.ranks_expected}"


def progress(row: JobRow) -> str:
    if row.stalled_seconds is not None:
        return row.worst  # "stalled 4 min"
    steps = row.facts.steps
    return UNKNOWN if steps is None else f"{steps:.0f} steps"


def worst(row: JobRow) -> str:
    """The worst fault that the progress column does not already say."""
    return row.next_worst if row.stalled_seconds is not None else row.worst


def alerts(row: JobRow) -> str:
    said = [f"{count} {severity}" for severity, count in sorted(row.facts.alerts.items())
            if count]
    return ", ".join(said)


def goodput(share: float | None) -> str:
    if share is None or not math.isfinite(share):
        return UNKNOWN
    return f"{100 * share:.0f} %"


def shares(row: JobRow) -> str:
    """The nodes whose GPUs serve other jobs too: "gpu-node-056: eval-sweep-7"; the first
    node named, the others counted."""
    shared = sorted(row.facts.shared.items())
    if not shared:
        return ""
    node, others = shared[0]
    said = f"{plain(node, NAME_CHARS)}: {', '.join(plain(o, NAME_CHARS) for o in others)}"
    more = len(shared) - 1
    return f"{said} (+{more} node{'s' * (more != 1)})" if more else said


def headline(rows: Sequence[JobRow]) -> str:
    """"12 jobs, 2 unhealthy"."""
    bad = unhealthy(rows)
    jobs = f"{len(rows)} job{'s' * (len(rows) != 1)}"
    return f"{jobs}, {bad} unhealthy" if bad else f"{jobs}, all healthy"


def fitted(lines: Sequence[Mapping[str, str]], room: int) -> dict[str, int]:
    """Each column's width: its widest line's, the free-text columns cut (``SHRINKING``) as far
    as needed for them all to fit in ``room`` characters, where they can."""
    widths = {column: max((len(line[column]) for line in lines), default=0)
              for column in COLUMNS}
    over = sum(widths.values()) - room
    for column in SHRINKING:
        cut_by = max(0, min(over, widths[column] - NARROWEST))
        widths[column] -= cut_by
        over -= cut_by
    return widths


def cut(text: str, width: int) -> str:
    """``text`` in ``width`` characters: a longer one ends with "…"."""
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def jobs_document(rows: Sequence[JobRow], *, time: float, source: str, recorded: bool,
                  errors: dict[str, str], version: str) -> dict:
    """The list as ``ranktop jobs --json`` prints it."""
    return finite({
        "schema": JOBS_SCHEMA_VERSION,
        "ranktop": version,
        "time": time,
        "source": plain(source, 300),
        "recorded": recorded,
        "healthy": unhealthy(rows) == 0 and not errors,
        "unhealthy": unhealthy(rows),
        "not_answered": {key: plain(why, 300) for key, why in sorted(errors.items())},
        "jobs": [_job(row) for row in rows],
    })


def _job(row: JobRow) -> dict:
    f = row.facts
    return {
        "name": plain(f.name, 1000), "healthy": row.healthy, "verdict": row.verdict.name.lower(),
        "worst": row.worst or None, "ranks_up": f.ranks_up, "ranks_expected": f.ranks_expected,
        "steps_in_window": f.steps, "stalled_seconds": row.stalled_seconds,
        "goodput_hour": f.goodput, "hottest_gpu_c": f.hottest_c, "xid_gpus": f.xid_gpus,
        "ecc_gpus": f.ecc_gpus, "straggler_ratio": f.straggler,
        "alerts": {plain(k, 40): v for k, v in sorted(f.alerts.items())},
        "owner": plain(f.owner, 1000) or None,
        "shared_nodes": {plain(node, 1000): [plain(o, 1000) for o in others]
                         for node, others in sorted(f.shared.items())},
    }
