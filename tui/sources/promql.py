"""PromQL for one poll: one query per metric, whatever the number of ranks.

A metric with several ways of being read (SM activity: SM active, else graphics engine
active, else GPU utilisation) becomes one query that takes, GPU by GPU, the first way that
has data, and labels each answer with the way it used, so the screen can say which it shows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ranktop.tui.settings.config import MetricQuery

WAY_LABEL = "ranktop_way"
# Candidates join per GPU on its UUID (``uuid`` under dcgm-exporter's old label names).
JOIN = "or on(UUID, uuid)"
_LABEL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def dcgm_selector(extra_matchers: str) -> str:
    """``{...}`` for DCGM series: the user's extra matchers, or nothing."""
    return "{" + extra_matchers + "}"


def job_selector(job_label: str, job: str) -> str:
    """``{training_job="name"}`` for the job's own series, or ``{}`` for every job."""
    if not job:
        return "{}"
    escaped = job.replace("\\", "\\\\").replace('"', '\\"')
    return "{" + f'{job_label}="{escaped}"' + "}"


def fill(template: str, dcgm: str, job: str) -> str:
    """Put the selectors in place of ``{dcgm}`` and ``{job}``."""
    return template.replace("{dcgm}", dcgm).replace("{job}", job)


def metric_query(queries: Sequence[MetricQuery], dcgm: str, job: str) -> str:
    """One expression for a metric; with several candidates, each marked with its index."""
    if len(queries) == 1:
        return fill(queries[0].promql, dcgm, job)
    marked = [
        f'label_replace({fill(q.promql, dcgm, job)}, "{WAY_LABEL}", "{index}", "", "")'
        for index, q in enumerate(queries)
    ]
    return f" {JOIN} ".join(marked)


def freshness_query(metric_name: str, selector: str) -> str:
    """The time of each series' newest sample, for per-rank staleness."""
    if not _LABEL_NAME.match(metric_name):
        raise ValueError(f"not a metric name: {metric_name!r}")
    return f"timestamp({metric_name}{selector})"
