"""Shapes ranktop does not read, said by `ranktop check-config`: a metric whose query named
series that the backend holds, yet not one of them reached a rank. Its map says "not
exported" and its values are no data, never 0; this says why: the series carry labels
ranktop does not join to a rank (a relabelled scrape, a new exporter or plugin version).

The series are found by the metric names in the metric's queries, left out where another
metric reads them fine (the job's step series in the NCCL Inspector's join), and each is
said with the label names it carries."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence

from ..core.config_values import MetricDef
from ..sources.prometheus.client import PromClient, QueryError
from ..sources.prometheus.diagnosis import shown
from ..sources.prometheus.discovery import LOOK_BACK_SECONDS

# A metric name where a query selects its series: ``name{...}``.
SELECTED_NAME = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\{")
SHOWN_LABELS = 12
JOINS = ("a series reaches a rank by its rank label, its GPU UUID, or its host and GPU "
         "index; NCCL Inspector 2.30's by node and gpu")


def selected_names(metric: MetricDef) -> set[str]:
    """The metric names the metric's queries select."""
    return {name for query in metric.queries for name in SELECTED_NAME.findall(query.promql)}


def unread_shapes(client: PromClient, metrics: Iterable[MetricDef],
                  values: Mapping[str, Sequence[float]], now: float | None = None
                  ) -> list[str]:
    """A line for each metric name whose series the backend holds but that gave its metric
    no rank in ``values`` (a poll's, per metric and rank)."""
    metrics = list(metrics)
    on_ranks = {m.id for m in metrics if any(v == v for v in values.get(m.id, ()))}
    read = {name for m in metrics if m.id in on_ranks for name in selected_names(m)}
    since = (time.time() if now is None else now) - LOOK_BACK_SECONDS
    lines = []
    for metric in metrics:
        if metric.id in on_ranks:
            continue
        for name in sorted(selected_names(metric) - read):
            try:
                labels = [label for label in client.label_names(name, since)
                          if label != "__name__"]
            except QueryError:
                continue
            if labels:
                lines.append(f"{metric.id}: {name} has series (labels {_listed(labels)}), "
                             "none on a rank: left out, never read as 0")
    return lines


def _listed(labels: Sequence[str]) -> str:
    named = ", ".join(shown(label, quoted=False) for label in sorted(labels)[:SHOWN_LABELS])
    return named + (" …" if len(labels) > SHOWN_LABELS else "")
