"""PromQL for one poll: one query per metric, whatever the number of ranks.

Each answer carries only the labels ranktop reads (``keep``): dcgm-exporter labels every
series with a dozen more (PCI bus, device, driver, instance, ...), two thirds of the bytes
of a poll, that nobody uses.

A metric with several ways of being read (SM activity: SM active, else graphics engine
active, else GPU utilisation) becomes one query that takes, GPU by GPU, the first way that
has data, and labels each answer with the way it used, so the screen can say which it shows.

Every label value ranktop puts in a query goes through ``quote``: a host named
``node",Hostname=~".+`` stays one value and never becomes a matcher of its own, and a
control character in one is sent as an escape, as the label holds it (the screen shows it
as U+FFFD; a query sending that would match nothing).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from ...core.config_values import DCGM_SELECTOR, JOB_SELECTOR, MetricQuery
from ...core.domain import DCGM_GPU_LABEL, DCGM_NODE_LABELS, DCGM_UUID_LABELS
from ...core.model import Rank

WAY_LABEL = "ranktop_way"
FRESH_LABEL = "ranktop_fresh"  # marks the freshness series folded into a metric's answer
FRESH_STALE, FRESH_NEWEST = "stale", "newest"
# Candidates join per GPU on its UUID (``uuid`` under dcgm-exporter's old label names).
JOIN = f"or on({', '.join(DCGM_UUID_LABELS)})"
ALERTS_ACTIVE = 'alertstate=~"firing|pending"'
DCGM_PROBE_METRIC = "DCGM_FI_DEV_GPU_TEMP"  # every dcgm-exporter exports it: is DCGM there?
# ... under its DCGM 4.6 name too, where the exporter's collectors CSV uses that one
DCGM_PROBE_METRICS = (DCGM_PROBE_METRIC, "DCGM_FI_DEV_GPU_TEMP_CELSIUS")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_METRIC_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def quote(value: str) -> str:
    """``value`` as a PromQL string literal: backslash, double quote, newline and every
    other control character escaped."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{_CONTROL.sub(_escape, escaped)}"'


def _escape(control: re.Match[str]) -> str:
    return f"\\u{ord(control.group()):04x}"


def selector(labels: Mapping[str, str], extra_matchers: str = "") -> str:
    """``{name="value",...}``: a matcher per label, values quoted, then the user's own."""
    matchers = [f"{name}={quote(value)}" for name, value in labels.items()]
    return "{" + ",".join([*matchers, extra_matchers] if extra_matchers else matchers) + "}"


def dcgm_selector(extra_matchers: str) -> str:
    """``{...}`` for DCGM series: the user's extra matchers, or nothing."""
    return selector({}, extra_matchers)


def job_labels(job_label: str, job: str) -> dict[str, str]:
    """The label that picks the job's own series, or none (every job) when none is named."""
    return {job_label: job} if job else {}


def job_selector(job_label: str, job: str) -> str:
    """``{training_job="name"}`` for the job's own series, or ``{}`` for every job."""
    return selector(job_labels(job_label, job))


def fill(template: str, dcgm: str, job: str) -> str:
    """Put the selectors in place of ``{dcgm}`` and ``{job}``."""
    return template.replace(DCGM_SELECTOR, dcgm).replace(JOB_SELECTOR, job)


def metric_query(queries: Sequence[MetricQuery], dcgm: str, job: str,
                 only: int | None = None) -> str:
    """One expression for a metric; with several candidates, each marked with its index
    (``only``: that one candidate alone, marked the same)."""
    if len(queries) == 1:
        return fill(queries[0].promql, dcgm, job)
    ways = range(len(queries)) if only is None else (only,)
    marked = [
        f'label_replace({fill(queries[index].promql, dcgm, job)}, "{WAY_LABEL}", "{index}", '
        '"", "")'
        for index in ways
    ]
    return f" {JOIN} ".join(marked)


def keep(expression: str, labels: Iterable[str]) -> str:
    """``expression`` with only ``labels`` left on its series (those that have them), or as
    it is when one of them cannot be named in PromQL. Series that differ only in what is
    dropped become one, with the largest value."""
    kept = list(dict.fromkeys(label for label in labels if label))
    if not kept or not all(is_label_name(label) for label in kept):
        return expression
    return f"max by ({', '.join(kept)}) ({expression})"


def rank_query(queries: Sequence[MetricQuery], rank: Rank, dcgm_extra: str,
               job: Mapping[str, str]) -> str:
    """The metric's query narrowed to one rank.

    DCGM series by the rank's GPU UUID, else by its host (under each label a bare-metal
    exporter may use) and GPU index; the job's own series by the labels ``job`` (the job's
    name and the rank's number).
    """
    if rank.uuid:
        gpus = [{label: rank.uuid} for label in DCGM_UUID_LABELS]
    else:
        gpus = [{label: rank.host, DCGM_GPU_LABEL: str(rank.gpu)} for label in DCGM_NODE_LABELS]
    mine = selector(job)
    return " or ".join(metric_query(queries, selector(gpu, dcgm_extra), mine) for gpu in gpus)


def alerts_query(label_sets: Iterable[Mapping[str, str]]) -> str:
    """The ``ALERTS`` series, firing or pending, that carry all the labels of any one set."""
    return " or ".join("ALERTS" + selector(labels, ALERTS_ACTIVE) for labels in label_sets)


def freshness_query(names: str | Sequence[str], series: str) -> str:
    """The time of each series' newest sample, for per-rank staleness: of the metric
    ``names`` (any of several: the first where a GPU has more than one)."""
    names = (names,) if isinstance(names, str) else tuple(names)
    stamps = " or ".join(f"timestamp({metric_name(name)}{series})" for name in names)
    return f"({stamps})" if len(names) > 1 else stamps


def with_freshness(expression: str, name: str | Sequence[str], series: str,
                   labels: Iterable[str], stale_after: float) -> str:
    """``expression`` and, in the same answer, marked with FRESH_LABEL: the newest sample
    time of each of its series (by ``labels``) whose newest sample is older than
    ``stale_after`` seconds (``stale``; none while all are fresh), and the newest sample time
    of them all (``newest``, one series). Prometheus compares the times, so a poll reads
    only the series that are stale, not every series' time."""
    newest = freshness_query(name, series)
    stale = f"{keep(newest, labels)} < (time() - {stale_after:g})"
    # ``or`` binds loosest: the expression needs no parentheses of its own
    return (f"{expression} or {_marked(stale, FRESH_STALE)} "
            f"or {_marked(f'max({newest})', FRESH_NEWEST)}")


def _marked(expression: str, value: str) -> str:
    return f'label_replace({expression}, "{FRESH_LABEL}", "{value}", "", "")'


def is_metric_name(name: str) -> bool:
    return bool(_METRIC_NAME.fullmatch(name))


def is_label_name(name: str) -> bool:
    return bool(_LABEL_NAME.fullmatch(name))


def metric_name(name: str) -> str:
    """``name``, checked to be a metric name (ValueError if not), to put in a query."""
    if not is_metric_name(name):
        raise ValueError(f"not a metric name: {name!r}")
    return name


def label_name(name: str) -> str:
    """``name``, checked to be a label name (ValueError if not), to put in a query."""
    if not is_label_name(name):
        raise ValueError(f"not a label name: {name!r}")
    return name
