"""What the Prometheus source's status says after a poll that read something.

Its health and why (some queries failed, the backend warned, no series, nothing new, a slow
poll, with the query it waited on longest: slow_poll), and a detail line: where the ranks
came from, how many GPUs DCGM matched, ranks left out, how old the newest sample is, what
the finder found, and, after a slow poll, what the recording rules would take out of it.
The sample interval it gives is the oldest the newest sample was found in the last few polls.
"""

from __future__ import annotations

import math
import re
from collections import deque
from typing import TYPE_CHECKING

from ...core.model import Frame, Health, SourceStatus
from .client import VICTORIA_METRICS
from .join import Polled
from .ranks import PROBE_METRIC
from .slow_poll import RulesSaving, is_slow, rules_note, rules_saving, slow_words

if TYPE_CHECKING:
    from .source import PrometheusSource

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
        saving = (rules_saving(source.settings, source.recorded, polled.waited)
                  if is_slow(took, source.settings.refresh_seconds) else None)
        health, message = _verdict(source, frame, polled, took, asked)
        last = source.status()
        since = last.since if last.health is health else now
        return SourceStatus(source.name, health, since=since, message=message, last_ok=now,
                            detail=_detail(source, frame, now - polled.latest, saving),
                            poll_seconds=took,
                            sample_interval=self._sample_interval(now, polled.latest),
                            partial=tuple(polled.partial), infos=tuple(polled.infos),
                            slowest=polled.slowest)

    def _sample_interval(self, now: float, newest: float) -> float:
        """About how often the data is sampled: the oldest the newest sample was found in
        the last few polls (a poll lands anywhere between two scrapes)."""
        if -math.inf < newest <= now:
            self._ages.append(now - newest)
        return max(self._ages, default=0.0)


def _verdict(source: PrometheusSource, frame: Frame, polled: Polled, took: float,
             asked: int) -> tuple[Health, str]:
    failures = polled.failures
    if polled.partial:
        return Health.SLOW, partial_words(tuple(polled.partial), len(frame.unknown))
    if failures:
        return Health.SLOW, (f"partial: {len(failures)} of {asked} queries failed "
                             f"({failures[0]}); those maps keep their last values")
    if not any(frame.values.values()):
        why = source.finder.why.said
        return Health.ERROR, f"no series for job {source.job_name!r}" + (
            f": {why}" if why else "")
    if len(frame.stale) >= len(source.rank_map) > 0:  # answers, but nothing new in them
        return Health.STALE, (f"no rank has a sample newer than "
                              f"{source.rank_settings.stale_after_seconds:.0f} s: are the "
                              f"exporters running?")
    if is_slow(took, source.settings.refresh_seconds):
        return Health.SLOW, slow_words(took, polled.slowest)
    return Health.OK, ""


def partial_words(reasons: tuple[str, ...], unknown: int) -> str:
    """"1 part of the backend failed — 127.0.0.1:9091: connection refused; 2,048 ranks not
    answered (not known, not down)": why the answers are partial (the header calls them so
    before it, ``report`` too)."""
    count = len(reasons)
    parts = f"{count} part{'s' if count > 1 else ''}"
    said = f"{parts} of the backend failed — {short_reason(reasons[0])}"
    if unknown:
        said += f"; {unknown:,} rank{'s' if unknown > 1 else ''} not answered (not known, not down)"
    return said


# Where a backend's reason names the store it failed to reach: "dial tcp 10.0.0.4:10901",
# "Post \"http://shard-b:9090/api/v1/read\"", "Addr: store-b:10901".
_STORE = re.compile(r"(?:dial tcp |//|Addr: )([\w.\-\[\]:]+?:\d+)")


def short_reason(reason: str) -> str:
    """A backend's reason for a partial answer in a few words: the store it names and the
    last clause ("127.0.0.1:9091: connection refused"), else its first 100 characters."""
    store = _STORE.search(reason)
    last = reason.rsplit(": ", 1)[-1].rsplit("desc = ", 1)[-1].strip(' "\\')
    if store is None or not last or len(last) > 60:
        return reason[:100]
    return f"{store.group(1)}: {last}"


def _detail(source: PrometheusSource, frame: Frame, age: float, saving: RulesSaving | None
            ) -> str:
    matched = sum(1 for v in frame.values.get(PROBE_METRIC, ()) if not math.isnan(v))
    rank_map = source.rank_map
    notes = [f"ranks from {rank_map.source}, DCGM {matched}/{len(rank_map)}",
             rank_map.left_out, _age_note(source, age), source.finder.status_note(),
             rules_note(saving) if saving is not None else ""]
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
