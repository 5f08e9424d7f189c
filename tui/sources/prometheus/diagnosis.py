"""Why a query came back empty, as far as the backend can tell.

Asked only when data is missing, with a few small aggregate queries:
- the metric exists, under other values of the job label (the job is named wrong), or with
  no series the DCGM selector matches (the selector matches nothing);
- the metric is not there at all: are the scrape targets down (``up == 0``, how many of how
  many, per scrape job; dcgm-exporter's told apart by name)? What is said of them is what
  ``up`` said at the last poll (``with_targets``), never an older answer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...settings.config import Settings
from . import promql
from .client import PromClient, QueryError

SHOWN_VALUES = 3  # other job names listed, most series first
SHOWN_CHARS = 60
DCGM_WORDS = ("dcgm", "gpu")  # a scrape job so named is dcgm-exporter's


@dataclass(frozen=True)
class ScrapeJob:
    name: str
    down: int
    total: int

    @property
    def dcgm(self) -> bool:
        return any(word in self.name.lower() for word in DCGM_WORDS)


@dataclass(frozen=True)
class Why:
    """Why the job's own series and DCGM's are empty ("" where they are not, or unknown).

    A side whose metric has no series at all (``*_absent``) is told by its scrape targets:
    ``scrape`` as ``up`` said when last asked, or why that could not be asked."""

    job_said: str = ""
    dcgm_said: str = ""
    job_absent: bool = False
    dcgm_absent: bool = False
    scrape: tuple[ScrapeJob, ...] = ()
    scrape_error: str = ""

    @property
    def job(self) -> str:
        return self._told(self.job_said, self.job_absent, dcgm=False)

    @property
    def dcgm(self) -> str:
        return self._told(self.dcgm_said, self.dcgm_absent, dcgm=True)

    @property
    def asks_targets(self) -> bool:
        """Whether what it says depends on the scrape targets."""
        return self.job_absent or self.dcgm_absent

    @property
    def said(self) -> str:
        """Both sides in one line; a scrape-target clause both share is said once."""
        if self.job_absent and self.dcgm_absent and self._targets(False) == self._targets(True):
            return f"{self.job_said}, {self.dcgm_said}; {self._targets(True)}"
        return "; ".join(side for side in (self.job, self.dcgm) if side)

    def _told(self, said: str, absent: bool, dcgm: bool) -> str:
        return f"{said}; {self._targets(dcgm)}" if absent else said

    def _targets(self, dcgm: bool) -> str:
        if self.scrape_error:
            return f"cannot tell whether its scrape targets are up: {self.scrape_error}"
        return targets_text(list(self.scrape), dcgm)


def explain(client: PromClient, settings: Settings, job_empty: bool, dcgm_empty: bool) -> Why:
    """What is known about each empty side; a failed question leaves its answer blank."""
    try:
        scrape = scrape_jobs(client) if job_empty or dcgm_empty else []
        job = _why_job(client, settings) if job_empty else ("", False)
        dcgm = _why_dcgm(client, settings) if dcgm_empty else ("", False)
    except (QueryError, ValueError) as error:
        return Why(job_said=f"cannot tell why: {error}" if job_empty else "",
                   dcgm_said=f"cannot tell why: {error}" if dcgm_empty else "")
    return Why(job[0], dcgm[0], job[1], dcgm[1], tuple(scrape))


def with_targets(client: PromClient, why: Why) -> Why:
    """``why`` with its scrape targets as ``up`` says now (where what it says needs them)."""
    if not why.asks_targets:
        return why
    try:
        return replace(why, scrape=tuple(scrape_jobs(client)), scrape_error="")
    except (QueryError, ValueError) as error:
        return replace(why, scrape=(), scrape_error=str(error))


def scrape_jobs(client: PromClient) -> list[ScrapeJob]:
    """Each scrape job's targets, and how many of them are down (``up == 0``)."""
    totals = {s.labels.get("job", ""): int(s.value) for s in client.query("count by (job) (up)")}
    down = {s.labels.get("job", ""): int(s.value)
            for s in client.query("count by (job) (up == 0)")}
    return [ScrapeJob(name, down.get(name, 0), total) for name, total in sorted(totals.items())]


def targets_text(jobs: list[ScrapeJob], dcgm: bool) -> str:
    """"scrape targets down (up == 0): "dcgm-exporter" 2 of 2", for dcgm-exporter's scrape jobs
    (or the others); every job's when none is told apart; or that all are up."""
    down = [j for j in jobs if j.down]
    if not jobs:
        return "no scrape targets at all (no up series)"
    if not down:
        total = sum(j.total for j in jobs)
        return f"every scrape target is up ({total} of {total})"
    mine = [j for j in down if j.dcgm == dcgm] or down
    listed = ", ".join(f"{shown(j.name)} {j.down} of {j.total}" for j in mine)
    whose = "dcgm-exporter " if dcgm and any(j.dcgm for j in mine) else ""
    return f"{whose}scrape targets down (up == 0): {listed}"


def _why_job(client: PromClient, settings: Settings) -> tuple[str, bool]:
    """What the job's step metric's series say, and whether it has none at all."""
    metric, label = settings.ranks.step_metric, settings.ranks.job_label
    job = settings.prometheus.job
    name = promql.metric_name(metric)
    values = {s.labels.get(label): int(s.value)
              for s in client.query(f"count by ({promql.label_name(label)}) ({name})")}
    if not values:
        return f"no {name} series at all", True
    if not job:
        return f"{name} has series, none of them usable", False
    if set(values) == {None}:
        return f"{name} has {sum(values.values())} series, none with a {label} label", False
    others = sorted(((v, n) for v, n in values.items() if v is not None),
                    key=lambda item: (-item[1], item[0]))
    listed = ", ".join(f"{shown(v)} ({n} series)" for v, n in others[:SHOWN_VALUES])
    more = f" and {len(others) - SHOWN_VALUES} more" if len(others) > SHOWN_VALUES else ""
    return f"{name} has no series with {label}={shown(job)}; it has {label}={listed}{more}", False


def _why_dcgm(client: PromClient, settings: Settings) -> tuple[str, bool]:
    """What DCGM's probe metric's series say (under its old name or DCGM 4.6's), and whether
    it has none at all."""
    extra = settings.prometheus.dcgm_selector
    for probe in promql.DCGM_PROBE_METRICS:
        counted = client.query(f"count({probe})")
        total = int(next(iter(counted)).value) if counted else 0
        if total:
            break
    else:
        return f"no {promql.DCGM_PROBE_METRIC} series at all", True
    if extra:
        return (f"{probe} has {total} series, none matching {{{shown(extra, quoted=False)}}} "
                "(dcgm_selector)"), False
    return f"{probe} has {total} series, none usable", False


def shown(value: str, quoted: bool = True) -> str:
    """A value from outside, short, with no control character, quoted unless told not to."""
    clean = "".join(c if c.isprintable() else "?" for c in value)
    if len(clean) > SHOWN_CHARS:
        clean = clean[:SHOWN_CHARS - 1] + "…"
    return f'"{clean}"' if quoted else clean
