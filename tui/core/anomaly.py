"""An anomaly: one thing wrong, where, since when, and whether it is confirmed yet.

A condition that holds but has not held for its detector's time is *pending*: shown at once
(with how long it has held, and how long confirmation needs), but kept out of the event log
and out of ``ranktop report``'s exit code until it is *confirmed*. Severe evidence may
confirm at once; ``rule`` then says which.
"""

from __future__ import annotations

from dataclasses import dataclass

from ranktop.tui.core.domain import SEVERITIES

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
        """"pending 4 s of 20 s", "confirmed (HW thermal slowdown)" or "confirmed"."""
        if self.awaiting:
            return f"pending: {self.awaiting}"
        if self.pending:
            return f"pending {self.held:.0f} s of {self.confirm_after:.0f} s"
        return f"confirmed ({self.rule})" if self.rule else "confirmed"


class Hold:
    """When each condition of one detector began; a condition that lapses starts over."""

    def __init__(self, kind: str, severity: str, seconds: float) -> None:
        self.kind, self.severity, self.seconds = kind, severity, seconds
        self.began: dict[object, float] = {}

    def update(self, now: float, holding: dict[object, str],
               severe: dict[object, str] | None = None,
               figures: dict[object, str] | None = None,
               details: dict[object, str] | None = None) -> list[Anomaly]:
        """An anomaly per condition holding now, pending until it has held ``seconds``.

        ``severe`` names the conditions whose evidence confirms them at once, and why;
        ``figures`` their sizes in a few characters, where they have one; ``details`` what
        only the detail view says of them.
        """
        self.began = {key: self.began.get(key, now) for key in holding}
        severe, figures, details = severe or {}, figures or {}, details or {}
        return [
            Anomaly(self.kind, self.severity, _rank(key), text, self.began[key],
                    held=now - self.began[key], confirm_after=self.seconds,
                    rule=severe.get(key, ""), figure=figures.get(key, ""),
                    detail=details.get(key, ""))
            for key, text in holding.items()
        ]


def _rank(key: object) -> int | None:
    return key if isinstance(key, int) else None
