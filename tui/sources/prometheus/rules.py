"""Prometheus recording rules that join DCGM's series to the job's ranks inside Prometheus,
for the job's configured metric names (``ranktop rules`` prints them).

One rule records which GPU each rank runs on, from the job's step metric and its GPU UUID
label (``ranks.uuid_label``: the rules need the job's series to carry it); one rule per
DCGM metric records the metric by
rank: ``ranktop:<metric>:by_rank``, labelled with the rank (and the job, and for a metric
of several ways the way). The source asks for the recorded series instead of DCGM's where
Prometheus holds them: one small series per rank, with no join left to do.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from ...core.domain import DCGM_UUID_LABELS
from ...settings.config import Settings
from . import promql

INFO_RECORD = "ranktop:rank_gpu:info"
_UUID = DCGM_UUID_LABELS[0]


def recorded_name(metric_id: str) -> str:
    return f"ranktop:{metric_id}:by_rank"


def recorded_query(job: str) -> str:
    """How many series each recorded metric has for the job, by its name."""
    matchers = job.strip("{}")
    return (f'count by (__name__) ({{__name__=~"ranktop:.+:by_rank"'
            f'{"," + matchers if matchers else ""}}})')


def recorded_ids(names: Iterable[str]) -> frozenset[str]:
    """The metric ids of recorded series names (``ranktop:<id>:by_rank``)."""
    return frozenset(name.split(":")[1] for name in names
                     if name.startswith("ranktop:") and name.endswith(":by_rank")
                     and name.count(":") == 2)


def dcgm_metrics(settings: Settings) -> list[str]:
    """The ids of the metrics read from DCGM alone (not from the job's own series)."""
    return [m.id for m in settings.metrics.values()
            if m.from_gpu and promql.is_metric_name(recorded_name(m.id))]


def rules_yaml(settings: Settings) -> str:
    """The rule file: one group, the GPU of each rank first, then each metric by rank."""
    rs, prom = settings.ranks, settings.prometheus
    job = promql.job_selector(rs.job_label, prom.job)
    dcgm = promql.dcgm_selector(prom.dcgm_selector)
    kept = [promql.label_name(rs.rank_label), *([rs.job_label] if prom.job else [])]
    rules = [(INFO_RECORD, _info(settings, job, kept))]
    for metric_id in dcgm_metrics(settings):
        metric = settings.metrics[metric_id]
        by = [*kept, *([promql.WAY_LABEL] if len(metric.queries) > 1 else [])]
        joined = (f"({promql.metric_query(metric.queries, dcgm, job)}) * on ({_UUID}) "
                  f"group_left ({', '.join(kept)}) {INFO_RECORD}{job}")
        rules.append((recorded_name(metric_id), f"max by ({', '.join(by)}) ({joined})"))
    name = f"ranktop-{prom.job}" if prom.job else "ranktop"
    lines = ["groups:", f"  - name: {json.dumps(name)}", "    rules:"]
    for record, expression in rules:
        lines += [f"      - record: {record}", f"        expr: {json.dumps(expression)}"]
    return "\n".join(lines) + "\n"


def _info(settings: Settings, job: str, kept: Iterable[str]) -> str:
    """Each rank's GPU (value 1), by its UUID as DCGM labels it."""
    rs = settings.ranks
    step = f"{promql.metric_name(rs.step_metric)}{job}"
    return f"group by ({', '.join([*kept, _UUID])}) ({_copied(step, rs.uuid_label, _UUID)})"


def _copied(expression: str, source: str, target: str) -> str:
    """``expression`` with label ``source`` copied into ``target``."""
    return (f'label_replace({expression}, "{promql.label_name(target)}", "$1", '
            f'"{promql.label_name(source)}", "(.+)")')
