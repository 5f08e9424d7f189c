"""An anomaly: one thing wrong, where, since when, and whether it is confirmed yet.

A condition that holds but has not held for its detector's time is *pending*: shown at once
(with how long it has held, and how long confirmation needs), but kept out of the event log
and out of ``ranktop report``'s exit code until it is *confirmed*. Severe evidence may
confirm at once; ``rule`` then says which.

A gap in the data is not a recovery: a condition whose data is missing from a poll (a
failed scrape, a partial answer from a sharded backend, a query that timed out) is held as
it was, saying since when its data is missing, and ends only on data that shows it gone.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, replace

from .domain import SEVERITIES
from .moment import shown

# Polls come a refresh apart on a wall clock that jitters: a condition that has held to within
# this much of its time has held for it (else a 20 s hold polled every 2 s would confirm at
# the 10th or the 11th poll by chance).
HOLD_SLACK_SECONDS = 0.5


@dataclass(frozen=True)
class Anomaly:
    """One thing wrong: on a rank (or a node, from its first rank), or on the whole job."""

    kind: str
    severity: str
    rank: int | None
    summary: str
    since: float  # when the condition began (it keeps this from pending to confirmed)
    held: float = 0.0  # seconds the condition has held so far
    confirm_after: float = 0.0  # seconds it must hold to be confirmed
    rule: str = ""  # the severe evidence that confirmed it early, if any
    awaiting: str = ""  # evidence still missing before it can be confirmed, if any
    figure: str = ""  # its size in a few characters ("1.29x", "88 °C", "+1"), if it has one
    detail: str = ""  # figures too technical for its row, for the incident's detail view
    # when its data went missing: held as it was since then (None: seen this poll)
    unseen_since: float | None = None

    @property
    def name(self) -> str:
        """"row remap failure" for "row_remap_failure": the kind as a row says it."""
        return self.kind.replace("_", " ")

    @property
    def label(self) -> str:
        """The name and the figure: "straggler 1.29x"."""
        return f"{self.name} {self.figure}" if self.figure else self.name

    @property
    def key(self) -> tuple[str, int | None]:
        return self.kind, self.rank

    @property
    def pending(self) -> bool:
        short = self.held + HOLD_SLACK_SECONDS < self.confirm_after
        return bool(self.awaiting) or (not self.rule and short)

    @property
    def confirmed(self) -> bool:
        return not self.pending

    @property
    def order(self) -> tuple[int, int, float, int]:
        """Confirmed before pending, then the most severe, the oldest, by rank."""
        return (int(self.pending), SEVERITIES.index(self.severity), self.since,
                -1 if self.rank is None else self.rank)

    @property
    def state(self) -> str:
        """"pending 4 s of 20 s", "confirmed: HW thermal slowdown is set" or "confirmed", and
        "· no data since 12:04:10" while its data is missing."""
        return self._state + (f" · no data since {shown(self.unseen_since)}"
                              if self.unseen_since is not None else "")

    @property
    def _state(self) -> str:
        if self.awaiting:
            return f"pending: {self.awaiting}"
        if self.pending:
            return f"pending {self.held:.0f} s of {self.confirm_after:.0f} s"
        return f"confirmed: {self.rule}" if self.rule else "confirmed"


class Everything:
    """Every key: where a detector's data is missing whole from a poll."""

    def __contains__(self, key: object) -> bool:
        return True


EVERY_KEY = Everything()


class Hold:
    """When each condition of one detector began; a condition that lapses starts over, one
    whose data is missing is held as it was."""

    def __init__(self, kind: str, severity: str, seconds: float) -> None:
        self.kind, self.severity, self.seconds = kind, severity, seconds
        self.began: dict[object, float] = {}
        self._last: dict[object, Anomaly] = {}  # each condition as last seen
        self._unseen: dict[object, float] = {}  # conditions held unseen, since when

    def update(self, now: float, holding: dict[object, str],
               severe: dict[object, str] | None = None,
               figures: dict[object, str] | None = None,
               details: dict[object, str] | None = None,
               unseen: Container[object] = ()) -> list[Anomaly]:
        """An anomaly per condition holding now, pending until it has held ``seconds``.

        ``severe`` names the conditions whose evidence confirms them at once, and why;
        ``figures`` their sizes in a few characters, where they have one; ``details`` what
        only the detail view says of them. ``unseen``: the keys whose data this poll lacks;
        a condition of one of them that does not hold now is held as it was last seen (not
        advancing towards confirmation either), rather than ended.
        """
        kept = [key for key in self._last if key not in holding and key in unseen]
        self.began = {key: self.began.get(key, now) for key in [*holding, *kept]}
        self._unseen = {key: self._unseen.get(key, now) for key in kept}
        severe, figures, details = severe or {}, figures or {}, details or {}
        seen = {
            key: Anomaly(self.kind, self.severity, _rank(key), text, self.began[key],
                         held=now - self.began[key], confirm_after=self.seconds,
                         rule=severe.get(key, ""), figure=figures.get(key, ""),
                         detail=details.get(key, ""))
            for key, text in holding.items()
        }
        held = {key: replace(self._last[key], unseen_since=self._unseen[key]) for key in kept}
        self._last = {**seen, **held}
        return [*seen.values(), *held.values()]


def _rank(key: object) -> int | None:
    return key if isinstance(key, int) else None
