"""What discovery found, as configuration: the tables a config file would hold to read it,
and the settings that result, for the console to use an unambiguous find at once.

One suggestion serves three readers: `check-config` prints it ready to paste, `init` writes
it to a new config file, and the source adopts the unambiguous part of it (saying so).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...core.config_values import MetricQuery
from ...settings.config import Settings
from .discovery import PER_RANK, ROLE, ROLES, Candidate, Discovery

Table = dict[str, Any]
# [ranks] keys, by the part a label plays.
RANK_KEYS = {"rank": "rank_label", "local": "local_gpu_label", "host": "host_label",
             "pod": "pod_label", "uuid": "uuid_label"}
PARTS = {"rank": "rank", "local": "local GPU", "host": "host", "pod": "pod", "uuid": "GPU UUID",
         "job": "job"}  # how each part a label plays is named on screen


def chosen(found: Discovery, only_unambiguous: bool = False) -> dict[str, Candidate]:
    """The candidate used for each role: the best on the chosen job (with
    ``only_unambiguous``, only where it is the one good candidate)."""
    picked = {}
    for role in ROLES:
        best = found.best(role.id)
        if best is None or (only_unambiguous and not found.unambiguous(role.id)):
            continue
        if found.job_label and best.label("job") != found.job_label:
            continue  # its series would not match the job's selector
        picked[role.id] = best
    if "step_time" not in picked:
        picked.pop("compute_time", None)  # ranks are named by the step time's labels
    return picked


def suggestion(found: Discovery, settings: Settings, only_unambiguous: bool = False) -> Table:
    """The config tables that read what discovery found (empty when it found nothing)."""
    picked = chosen(found, only_unambiguous)
    if not picked:
        return {}
    table: Table = {}
    if found.job_label:
        table["prometheus"] = {"job": found.job}  # said even when a flag said it: a file
    elif settings.prometheus.job:                  # pasted alone must work
        table["prometheus"] = {"job": ""}  # the series carry no job label to select on
    step = picked.get("step_time")
    if step is not None:
        ranks = {"step_metric": step.fresh_metric}
        if found.job_label:
            ranks["job_label"] = found.job_label
        ranks.update({key: step.label(part) for part, key in RANK_KEYS.items()
                      if step.label(part)})
        table["ranks"] = ranks
    metrics = {ROLE[r].metric: {"promql": c.promql} for r, c in picked.items() if r in PER_RANK}
    if metrics:
        table["metrics"] = metrics
    job_metrics = {ROLE[r].job_key: f"{ROLE[r].aggregate}({c.promql})"
                   for r, c in picked.items() if r not in PER_RANK}
    if job_metrics:
        table["job_metrics"] = job_metrics
    return table


def apply(settings: Settings, table: Table, shows: Mapping[str, str]) -> Settings:
    """``settings`` reading what ``table`` (a suggestion) says, as if the user's file did;
    ``shows`` names each metric's new query on screen."""
    prometheus = replace(settings.prometheus, **table.get("prometheus", {}))
    ranks = replace(settings.ranks, **table.get("ranks", {}))
    metrics = dict(settings.metrics)
    for metric_id, keys in table.get("metrics", {}).items():
        query = MetricQuery(keys["promql"], shows.get(metric_id, keys["promql"]))
        metrics[metric_id] = replace(metrics[metric_id], queries=(query,))
    job_metrics = {**settings.job_metrics, **table.get("job_metrics", {})}
    return replace(settings, prometheus=prometheus, ranks=ranks, metrics=metrics,
                   job_metrics=job_metrics)


def described(candidate: Candidate) -> str:
    """One line on a candidate: its series, its labels, how sure discovery is."""
    parts = [f"{PARTS[part]}={label}" for part, label in candidate.labels.items()]
    size = (f"{candidate.series} ranks" if candidate.label("rank")
            else f"{candidate.series} series")
    return f"{candidate.name}  {size}; labels: {', '.join(parts) or 'none'}; " \
           f"confidence {candidate.score:.2f}"
