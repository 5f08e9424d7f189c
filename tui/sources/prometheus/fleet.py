"""The jobs list's queries: every job the backend holds, in a fixed number of queries per
refresh whatever the number of jobs.

Each query aggregates ``by`` the configured job label, so a refresh of 1,000 jobs sends the
same queries as one of 2. The job ids come through the label-values API (a few bytes per
job), never the series API (every series of the step metric: megabytes at fleet scale).
DCGM's series carry no job: they are joined to the jobs by GPU UUID, through the UUID label
the job's step metric carries (``ranks.uuid_label``), inside Prometheus.

``ranktop rules --jobs`` prints recording rules for the costly aggregations
(``fleet_rules_yaml``); the list reads the recorded series instead wherever Prometheus holds
them (checked every ``RULES_CHECK_EVERY`` refreshes).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ...core.fleet import JobFacts, Limits
from ...settings.config import Settings
from ..bounded_body import ByteBudget
from .batch import answers as answers_of
from .client import PromClient, QueryError, Vector
from .promql import dcgm_selector, fill, label_name, metric_name
from .source import GIVE_UP_KINDS

ID_WINDOW_SECONDS = 3600.0  # a job whose step metric had samples this recently is listed
PROGRESS_SECONDS = 120.0  # a job with no step in this long is stalled
OWNER_LABELS = ("user", "owner")  # where the job's series say who runs it
SEVERITY = "severity"
RULES_CHECK_EVERY = 10
FLEET_BYTES = 64_000_000  # a refresh of 1,000 jobs reads well under 1 MB
RECORD_PREFIX = "ranktop:fleet:"
# The job's step counter, as [job_metrics] step names it: the metric in front of ``{job}``.
_COUNTER = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\{job\}")
_UUID = "UUID"


@dataclass(frozen=True)
class FleetNames:
    """The names the fleet's queries are made of, checked once: a name PromQL cannot hold is
    a ValueError here, not a broken query later."""

    job: str
    rank: str
    uuid: str
    host: str
    step: str  # the per-rank step-time gauge: one series per rank up
    counter: str  # the step counter: "" where the config names none
    compute: str  # the per-rank compute time expression ("" where none), {job} filled
    temperature: str
    xid: str
    ecc: str
    window: float = PROGRESS_SECONDS

    @classmethod
    def of(cls, settings: Settings, window: float = PROGRESS_SECONDS) -> FleetNames:
        rs, metrics = settings.ranks, settings.metrics
        dcgm = dcgm_selector(settings.prometheus.dcgm_selector)
        found = _COUNTER.search(settings.job_metrics.get("step", ""))

        def gpu(metric_id: str) -> str:
            metric = metrics.get(metric_id)
            return f"({fill(metric.queries[0].promql, dcgm, '')})" if metric else ""

        compute = metrics.get("compute_time")
        return cls(job=label_name(rs.job_label), rank=label_name(rs.rank_label),
                   uuid=label_name(rs.uuid_label), host=label_name(rs.host_label),
                   step=metric_name(rs.step_metric),
                   counter=metric_name(found.group(1)) if found else "",
                   compute=f"({fill(compute.queries[0].promql, dcgm, '')})" if compute else "",
                   temperature=gpu("temperature"), xid=gpu("xid"), ecc=gpu("ecc_dbe"),
                   window=window)


def raw_queries(n: FleetNames) -> dict[str, str]:
    """What each figure is, computed from the raw series; keys are the figures'."""
    by = f"by ({n.job})"
    owners = ", ".join([n.job, *OWNER_LABELS])
    named = f'ALERTS{{alertstate="firing",{n.job}!=""}}'
    unnamed = f'ALERTS{{alertstate="firing",{n.job}=""}}'
    queries = {
        "up": f"count by ({owners}) ({n.step})",
        "seen": f"count {by} (count by ({n.job}, {n.rank}) "
                f"(last_over_time({n.step}[{ID_WINDOW_SECONDS:.0f}s])))",
        # alerts that name the job, and those that name only a GPU of it
        "alerts": f"count by ({n.job}, {SEVERITY}) ({named} or {_on_gpus(n, unnamed)})",
        "shared": shared_nodes(n),
    }
    if n.counter:
        queries["steps"] = steps_expression(n)
        # a counter younger than the window has not had the time to show a step
        queries["old"] = f"group {by} ({n.counter} offset {n.window:.0f}s)"
    if n.compute:
        queries["straggler"] = f"max {by} ({n.compute}) / quantile {by} (0.5, {n.compute})"
    if n.temperature:
        queries["hottest"] = f"max {by} ({_on_gpus(n, n.temperature)})"
    if n.xid:
        queries["xid"] = f"count {by} ({_on_gpus(n, n.xid + ' > 0')})"
    if n.ecc:
        queries["ecc"] = f"count {by} ({_on_gpus(n, n.ecc + ' > 0')})"
    return queries


def _on_gpus(n: FleetNames, expression: str) -> str:
    """``expression`` (DCGM's series, by GPU UUID) labelled with the job each GPU serves.
    DCGM's UUID is copied under the job's UUID label, not the other way: the DCGM side is
    often a handful of series (an XID, an ECC error), the job's side every rank's."""
    dcgm = f'label_replace({expression}, "{n.uuid}", "$1", "{_UUID}", "(.+)")'
    return f"{dcgm} * on ({n.uuid}) group_left ({n.job}) group by ({n.job}, {n.uuid}) ({n.step})"


def shared_nodes(n: FleetNames) -> str:
    """Each (job, host) pair on a host whose GPUs serve more than one job."""
    pairs = f"group by ({n.job}, {n.host}) ({n.step})"
    return f"{pairs} and on ({n.host}) (count by ({n.host}) ({pairs}) > 1)"


def steps_expression(n: FleetNames) -> str:
    """Steps each job made in the progress window (the highest of its ranks' counts)."""
    return f"max by ({n.job}) (changes({n.counter}[{n.window:.0f}s]))"


def over_hour(steps: str, window: float) -> dict[str, str]:
    """From a per-job steps-in-window expression: when each job last advanced, and the
    share of the last hour's minutes in which it did (its goodput, as the list reads it:
    time spent advancing; a slowdown still counts as advancing), read once a window: the
    hour's windows side by side, each step in one of them: half the evaluations of ``steps``
    that overlapping windows every half window cost, for the same share; the last advance
    is known to a window)."""
    grid = f"[1h:{window:.0f}s]"
    return {"advanced": f"max_over_time(timestamp({steps} > 0){grid})",
            "goodput": f"avg_over_time(({steps} > bool 0){grid})"}


def fleet_rules(n: FleetNames) -> dict[str, str]:
    """Recording rules: each raw figure recorded once per job, under RECORD_PREFIX."""
    return {f"{RECORD_PREFIX}{key}": expression for key, expression in raw_queries(n).items()}


def recorded_queries(n: FleetNames) -> dict[str, str]:
    """The same figures from the recorded series: a thousand small series, no join left."""
    queries = {key: name for key, name in
               ((key, f"{RECORD_PREFIX}{key}") for key in raw_queries(n))}
    if "steps" in queries:
        queries.update(over_hour(queries["steps"], n.window))
    return queries


def fleet_rules_yaml(settings: Settings) -> str:
    """The rule file of ``ranktop rules --jobs``: one group."""
    lines = ["groups:", '  - name: "ranktop-fleet"', "    rules:"]
    for record, expression in fleet_rules(FleetNames.of(settings)).items():
        lines += [f"      - record: {record}", f"        expr: {json.dumps(expression)}"]
    return "\n".join(lines) + "\n"


@dataclass
class FleetRead:
    """One refresh: the facts of every job, and what it cost."""

    jobs: list[JobFacts]
    time: float
    recorded: bool  # read from the recording rules
    queries: int
    bytes: int
    errors: dict[str, str] = field(default_factory=dict)  # figure -> why it is missing


class FleetReader:
    """Reads every job's facts, a fixed number of queries per refresh."""

    def __init__(self, settings: Settings, client: PromClient | None = None,
                 clock: Callable[[], float] = time.time,
                 window: float = PROGRESS_SECONDS) -> None:
        self.names = FleetNames.of(settings, window)
        self.client = client or PromClient(settings.prometheus)
        self.clock = clock
        self._raw = raw_queries(self.names)
        if "steps" in self._raw:
            self._raw.update(over_hour(steps_expression(self.names), window))
        self.limits = Limits(settings.detect.temperature_c, settings.detect.straggler_factor,
                             window)
        self._recorded = recorded_queries(self.names)
        self._refreshes = 0
        self.recorded = False

    def close(self) -> None:
        self.client.close()

    def job_ids(self) -> list[str]:
        """The jobs whose step metric had samples in the last hour (QueryError if unread)."""
        since = self.clock() - ID_WINDOW_SECONDS
        return self.client.label_values(self.names.job, self.names.step, since)

    def read(self) -> FleetRead:
        """Every job's facts now. QueryError when not even the job ids could be read."""
        now = self.clock()
        if self._refreshes % RULES_CHECK_EVERY == 0:
            self.recorded = self._rules_present()
        self._refreshes += 1
        ids = self.job_ids()
        queries = self._recorded if self.recorded else self._raw
        budget = ByteBudget(FLEET_BYTES)
        answers: dict[str, Vector] = {}
        errors: dict[str, str] = {}
        for key, outcome, _ in answers_of(self.client, queries, budget, _gives_up,
                                          threading.Event(), self.clock):
            if isinstance(outcome, Vector):
                answers[key] = outcome
            else:
                errors[key] = str(outcome) if outcome is not None else "not sent"
        facts = facts_of(self.names.job, ids, answers, self.names.host)
        return FleetRead(facts, now, self.recorded, len(queries) + 1,
                         budget.limit - budget.left, errors)

    def _rules_present(self) -> bool:
        try:
            return bool(self.client.query(f"count({RECORD_PREFIX}up)"))
        except QueryError:
            return False


def _gives_up(error: QueryError) -> bool:
    return error.kind in GIVE_UP_KINDS


def facts_of(job_label: str, ids: list[str], answers: Mapping[str, Vector],
             host_label: str = "") -> list[JobFacts]:
    """Each job's facts from the answers (a figure a query did not answer is unknown)."""
    def per_job(key: str) -> dict[str, float]:
        found: dict[str, float] = {}
        for labels, value in answers[key].pairs() if key in answers else ():
            name = labels.get(job_label, "")
            if name:
                found[name] = found.get(name, 0.0) + value if key == "up" else value
        return found

    up, seen, steps, old = per_job("up"), per_job("seen"), per_job("steps"), per_job("old")
    owners = _owners(job_label, answers.get("up"))
    alerts = _alerts(job_label, answers.get("alerts"))
    figures = {key: per_job(key) for key in
               ("advanced", "goodput", "hottest", "xid", "ecc", "straggler")}
    shared = _shared(job_label, host_label, answers.get("shared"))
    known = dict.fromkeys([*ids, *up, *seen, *steps])
    return [JobFacts(
        name=name,
        ranks_up=int(up.get(name, 0)) if "up" in answers else None,
        ranks_expected=_whole(seen.get(name)),
        steps=steps.get(name) if "steps" in answers else None,
        window_full=name in old,
        advanced=figures["advanced"].get(name),
        goodput=figures["goodput"].get(name),
        hottest_c=figures["hottest"].get(name),
        xid_gpus=int(figures["xid"].get(name, 0)),
        ecc_gpus=int(figures["ecc"].get(name, 0)),
        straggler=figures["straggler"].get(name),
        alerts=alerts.get(name, {}),
        owner=owners.get(name, ""),
        shared=shared.get(name, {}),
    ) for name in known]


def _whole(value: float | None) -> int | None:
    return None if value is None else int(value)


def _owners(job_label: str, answer: Vector | None) -> dict[str, str]:
    owners: dict[str, str] = {}
    for labels, _value in answer.pairs() if answer is not None else ():
        who = next((labels[name] for name in OWNER_LABELS if labels.get(name)), "")
        if who:
            owners.setdefault(labels.get(job_label, ""), who)
    return owners


def _alerts(job_label: str, answer: Vector | None) -> dict[str, dict[str, int]]:
    alerts: dict[str, dict[str, int]] = {}
    for labels, value in answer.pairs() if answer is not None else ():
        counts = alerts.setdefault(labels.get(job_label, ""), {})
        severity = labels.get(SEVERITY, "") or "none"
        counts[severity] = counts.get(severity, 0) + int(value)
    return alerts


def _shared(job_label: str, host_label: str, answer: Vector | None
            ) -> dict[str, dict[str, tuple[str, ...]]]:
    """For each job, its hosts that serve other jobs too, with those jobs."""
    jobs_on: dict[str, list[str]] = {}
    for labels, _value in answer.pairs() if answer is not None else ():
        job, host = labels.get(job_label, ""), labels.get(host_label, "")
        if job and host:
            jobs_on.setdefault(host, []).append(job)
    shared: dict[str, dict[str, tuple[str, ...]]] = {}
    for host, jobs in sorted(jobs_on.items()):
        for job in jobs:
            others = tuple(sorted(other for other in jobs if other != job))
            if others:
                shared.setdefault(job, {})[host] = others
    return shared
