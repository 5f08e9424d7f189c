"""What the Prometheus source does about empty answers.

While the job's configured metrics come back empty it looks for them (discovery, now and
then, never every poll) and, where one find is unambiguous, uses it at once and says so;
while the job's or DCGM's series are empty it asks why (targets down, another job label,
a selector that matches nothing), now and then too, and again at once when what is empty
changes; the scrape targets a "why" names are asked again at every poll, so that what it
says of them is what ``up`` says now. Every empty map gets a note saying what is known and
what to do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from ...settings.config import Settings
from . import diagnosis, suggest
from .client import PromClient
from .discovery import PER_RANK, Discovery, discover

DISCOVER_EVERY_SECONDS = 300.0
EXPLAIN_EVERY_SECONDS = 60.0
CHECK_CONFIG = "`ranktop check-config`"


class Finder:
    """Discovery and diagnosis for one source, each throttled, with what they found."""

    def __init__(self, client: PromClient, clock: Callable[[], float]) -> None:
        self.client = client
        self.clock = clock
        self.discovery = Discovery()
        self.why = diagnosis.Why()
        self.adopted: suggest.Table = {}  # what the source uses that the config did not say
        self.shows: dict[str, str] = {}  # metric -> how its found query is named on screen
        self._looked_at = -math.inf
        self._asked_at = -math.inf
        self._asked_for = (False, False)  # (job empty, DCGM empty) when last asked why

    def after_poll(self, settings: Settings, job_empty: bool, dcgm_empty: bool
                   ) -> Settings | None:
        """New settings when an unambiguous find is to be used from now on, else None."""
        now = self.clock()
        adopted = None
        if job_empty and now - self._looked_at >= DISCOVER_EVERY_SECONDS:
            self._looked_at = now
            self.discovery = discover(self.client, settings.prometheus.job, now)
            adopted = self._adopt(settings)
        empty = (job_empty and adopted is None, dcgm_empty)
        if not any(empty):
            self.why, self._asked_for = diagnosis.Why(), empty
        elif empty != self._asked_for or now - self._asked_at >= EXPLAIN_EVERY_SECONDS:
            self._asked_at, self._asked_for = now, empty
            self.why = diagnosis.explain(self.client, adopted or settings, *empty)
        else:
            self.why = diagnosis.with_targets(self.client, self.why)
        return adopted

    def _adopt(self, settings: Settings) -> Settings | None:
        table = suggest.suggestion(self.discovery, settings, only_unambiguous=True)
        if "ranks" not in table:
            return None  # without the step time's rank labels nothing can be placed
        picked = suggest.chosen(self.discovery, only_unambiguous=True)
        self.shows = {role: f"{c.name}, found" for role, c in picked.items() if role in PER_RANK}
        self.adopted = table
        return suggest.apply(settings, table, self.shows)

    def notes(self, settings: Settings, values: Mapping[str, object]) -> dict[str, str]:
        """Why each metric that has no values has none, and what to do, where known."""
        notes = {}
        for metric_id, metric in settings.metrics.items():
            if metric_id in values or not metric.queries:
                continue
            note = self._note(metric_id, metric.queries[0].promql)
            if note:
                notes[metric_id] = note
        return notes

    def _note(self, metric_id: str, promql: str) -> str:
        if "{job}" not in promql:
            return self.why.dcgm
        found = self.discovery.best(metric_id)
        if found is not None and found.name not in promql:
            return f"{CHECK_CONFIG} suggests {found.name}"
        return self.why.job  # the right series, on another job, or none at all

    def status_note(self) -> str:
        """One clause for the status line: what is used unasked, or what was found."""
        if self.adopted:
            used = ", ".join(sorted(name.removesuffix(", found") for name in self.shows.values()))
            job = self.discovery.job
            on = f" of {self.discovery.job_label}={diagnosis.shown(job)}" if job else ""
            return (f"using {used}{on}: found, not in your config (unambiguous; "
                    f"{CHECK_CONFIG} prints the lines to keep)")
        step = self.discovery.best("step_time")
        if step is not None:
            return f"job metrics not exported; {CHECK_CONFIG} suggests {step.name}"
        return ""
