"""What the Prometheus source's status says after a poll that read something.

Its health and why (some queries failed, the backend warned, no series, nothing new, a slow
poll), and a detail line: where the ranks came from, how many GPUs DCGM matched, ranks left
out, how old the newest sample is, and what the finder found. The sample interval it gives
is the oldest the newest sample was found in the last few polls.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING

from ranktop.tui.core.model import Frame, Health, SourceStatus
from ranktop.tui.sources.prom_client import VICTORIA_METRICS
from ranktop.tui.sources.prom_join import Polled
from ranktop.tui.sources.prom_ranks import PROBE_METRIC

if TYPE_CHECKING:
    from ranktop.tui.sources.prometheus import PrometheusSource

SLOW_SECONDS = 5.0
AGES_KEPT = 10  # polls whose newest sample's age tells the sample interval
OLD_DATA_SECONDS = 5.0  # newest sample older than this: the status says how old


class PollReport:
    """The status after each poll, and the newest sample's age over the last polls."""

    def __init__(self) -> None:
        self._ages: deque[float] = deque(maxlen=AGES_KEPT)  # the newest sample's, per poll

    def status(self, source: PrometheusSource, frame: Frame, polled: Polled, took: float,
               asked: int) -> SourceStatus:
        """The source's status after a poll of ``asked`` queries that took ``took`` s."""
        now = source.clock()
        health, message = _verdict(source, frame, polled, took, asked)
        last = source.status()
        since = last.since if last.health is health else now
        return SourceStatus(source.name, health, since=since, message=message,
                            last_ok=now, detail=_detail(source, frame, now - polled.latest),
                            poll_seconds=took,
                            sample_interval=self._sample_interval(now, polled.latest))

    def _sample_interval(self, now: float, newest: float) -> float:
        """About how often the data is sampled: the oldest the newest sample was found in
        the last few polls (a poll lands anywhere between two scrapes)."""
        if -math.inf < newest <= now:
            self._ages.append(now - newest)
        return max(self._ages, default=0.0)


def _verdict(source: PrometheusSource, frame: Frame, polled: Polled, took: float,
             asked: int) -> tuple[Health, str]:
    failures, warnings = polled.failures, polled.warnings
    if failures:
        return Health.SLOW, (f"partial: {len(failures)} of {asked} queries failed "
                             f"({failures[0]}); those maps keep their last values")
    if warnings:
        return Health.SLOW, (f"partial answer: the backend warns {warnings[0]!r}; some "
                             f"series may be missing")
    if not any(frame.values.values()):
        why = source.finder.why.said
        return Health.ERROR, f"no series for job {source.job_name!r}" + (
            f": {why}" if why else "")
    if len(frame.stale) >= len(source.rank_map) > 0:  # answers, but nothing new in them
        return Health.STALE, (f"no rank has a sample newer than "
                              f"{source.rank_settings.stale_after_seconds:.0f} s: are the "
                              f"exporters running?")
    if took > max(SLOW_SECONDS, source.settings.refresh_seconds):
        return Health.SLOW, f"slow: the poll took {took:.1f} s"
    return Health.OK, ""


def _detail(source: PrometheusSource, frame: Frame, age: float) -> str:
    matched = sum(1 for v in frame.values.get(PROBE_METRIC, ()) if not math.isnan(v))
    rank_map = source.rank_map
    notes = [f"ranks from {rank_map.source}, DCGM {matched}/{len(rank_map)}",
             rank_map.left_out, _age_note(source, age), source.finder.status_note()]
    return "; ".join(note for note in notes if note)


def _age_note(source: PrometheusSource, age: float) -> str:
    """How old the newest sample is, when it is older than the poll suggests."""
    if not OLD_DATA_SECONDS < age < math.inf:
        return ""
    note = f"newest sample {age:.0f} s old"
    if source.client.backend == VICTORIA_METRICS and not source.prom.latency_offset:
        note += (" (VictoriaMetrics hides its newest samples, 30 s by default: set "
                 "[prometheus] latency_offset = \"1s\")")
    return note
