"""What a slow poll says of itself: how long it took, which query it waited on longest, and,
where Prometheus does not record the job's DCGM metrics by rank, what the recording rules
(``ranktop rules``) would take out of it, measured on this poll.

The header has room for a few words (it is cut at the pane's width): the poll's time and
the slowest query, in the status's message. What the rules would save goes in its detail,
which the help screen shows whole; the header points at the command it names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ...core.model import QueryTime
from ...settings.config import Settings
from . import rules as prom_rules
from .ranks import RANK_KEYS

SLOW_SECONDS = 5.0  # a poll longer than this (or than a refresh, where longer) is slow
NAMED_FROM_SECONDS = 0.1  # a slowest query quicker than this is not worth naming
RULES_COMMAND = "`ranktop rules`"


@dataclass(frozen=True)
class RulesSaving:
    """The queries the recording rules would take the DCGM join out of, and how long their
    answers took this poll, in all (they run a few at a time: not the poll's time saved)."""

    queries: int
    seconds: float


def is_slow(took: float, refresh: float) -> bool:
    """Whether a poll that took ``took`` seconds is slow, for a refresh of ``refresh``."""
    return took > max(SLOW_SECONDS, refresh)


def slow_words(took: float, slowest: QueryTime | None) -> str:
    """"slow: the poll took 20.3 s, 12.1 s of it waiting on sm_active"."""
    said = f"slow: the poll took {took:.1f} s"
    if slowest is not None and slowest.seconds >= NAMED_FROM_SECONDS:
        said += f", {slowest.seconds:.1f} s of it waiting on {slowest.asked_for}"
    return said


def rules_saving(settings: Settings, recorded: Iterable[str], waited: Mapping[str, float]
                 ) -> RulesSaving | None:
    """What the rules would take out of a poll whose queries took ``waited`` seconds (by
    key), with ``recorded`` the metrics Prometheus records by rank already; None where they
    would take nothing out (every DCGM metric recorded, or none asked)."""
    kept = frozenset(recorded)
    joined = [f"metric:{metric_id}" for metric_id in prom_rules.dcgm_metrics(settings)
              if metric_id not in kept]
    # the rank map's own queries are joined whatever Prometheus records (source)
    seconds = [waited[key] for key in joined if key in waited and key not in RANK_KEYS]
    if not seconds or sum(seconds) <= 0:
        return None
    return RulesSaving(len(seconds), sum(seconds))


def rules_note(saving: RulesSaving) -> str:
    """The status detail's note: what the rules would take out of this poll."""
    count = f"{saving.queries} quer{'ies' if saving.queries > 1 else 'y'}"
    return (f"no recording rules in Prometheus: {RULES_COMMAND} would take the DCGM join "
            f"out of {count} (their answers took {saving.seconds:.1f} s in all this poll)")
