"""The analysis's side of hang triage: when to ask for the ranks' logs (and Flight Recorder
dumps) to be read, and which finished verdict to show. The reading and the verdict happen
elsewhere (a ``Triage``, in ``ranktop.tui.logs.triage_worker``), off the polling path: a
poll asks and never waits.

While the job looks stuck, a triage is asked for at once and then every
``TRIAGE_EVERY_SECONDS``; each poll shows the newest verdict finished for this hang, so a
verdict lands a poll or more after it was asked for. While no verdict is sure yet (the
watchdogs are firing, the evidence coming in), the logs are read again as soon as the last
read finished: the triage worker's rest bounds what that costs.

A hang's verdict has hysteresis, like every anomaly: it ends only when its evidence is gone,
never on one moved step or one calm poll. While a rank it names dead is still down it stays;
otherwise it ends once the job keeps moving (the analysis says when: more than one step
since the last stall) or nothing has looked stuck for ``CLEAR_SECONDS``. A late verdict of
an ended hang is never shown for the next.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import Protocol

from ..anomaly import Anomaly
from ..model import Frame, RankMap
from .frozen import FrozenRanks
from .triage import HangVerdict

TRIAGE_EVERY_SECONDS = 10.0
# A verdict older than this says how old it is: the logs may have moved on since.
OLD_VERDICT_SECONDS = 2 * TRIAGE_EVERY_SECONDS
CLEAR_SECONDS = 10.0  # nothing stuck this long, and the hang's verdict ends


@dataclass(frozen=True)
class TriageAsk:
    """What one triage is asked to read: every rank of ``rank_map``, suspects first."""

    ask_id: int  # rises with each ask
    as_of: float  # the time of the poll that asked
    rank_map: RankMap
    suspects: tuple[int, ...] = ()  # read first: ranks down or flagged by an anomaly
    gone: tuple[int, ...] = ()  # ranks whose series vanished
    since: float | None = None  # when the stall began, if it was seen to: older dumps are
    # of an earlier hang


@dataclass(frozen=True)
class TriageResult:
    """One finished triage: its verdict (None: no hang in what was read) and its cost."""

    ask_id: int
    as_of: float
    verdict: HangVerdict | None
    ranks_read: int
    ranks_total: int
    bytes_read: int = 0
    seconds: float = 0.0  # wall time of the run, reading and verdict

    @property
    def complete(self) -> bool:
        return self.ranks_read >= self.ranks_total


class Triage(Protocol):
    """Reads the logs an ask names, in its own time; never blocks the caller."""

    def request(self, ask: TriageAsk) -> None: ...

    def latest(self) -> TriageResult | None: ...


class HangWatch:
    """Asks for a triage while the job looks stuck and gives the verdict of this hang."""

    def __init__(self, triage: Triage | None) -> None:
        self.triage = triage
        self.since: float | None = None  # when this hang's first verdict was asked for
        self._asks = 0
        self._first: int | None = None  # this hang's first ask; None while no hang is open
        self._first_at: float | None = None  # ... and the time of the frame it was made at
        self._first_down: frozenset[int] = frozenset()  # ... and the ranks down then
        self._asked_at = 0.0
        self._dumps_since: float | None = None  # the first ask's: this hang's dumps are newer
        self._kept: HangVerdict | None = None  # this hang's last verdict
        self._calm_since: float | None = None  # nothing has looked stuck since then
        self.frozen = FrozenRanks()  # idle GPUs and silent ranks seen in this hang

    def update(self, now: float, stuck: bool, ask: Callable[[int], TriageAsk],
               moving: bool = False, down: Collection[int] = ()) -> HangVerdict | None:
        """The verdict to show now; ``ask`` makes the ask with the id given, when one is due.
        ``moving``: the job keeps stepping; ``down``: the ranks down now. Without a triage
        (no logs, no dumps) a hang is still opened and closed, for ``suspicion``."""
        self._calm_since = None if stuck else (self._calm_since or now)
        if self._first is not None and self._over(now, moving, down):
            self.end()
        if not stuck:
            return self.current()  # a hang not over yet keeps its verdict; nothing is asked
        if self._ask_due(now):
            if self._first is None:
                self._first_down = frozenset(down)
            self._ask(now, ask)
        return self.current()

    def observe(self, frame: Frame) -> None:
        """A frame of a job standing still: note the GPUs idle among spinning ones."""
        self.frozen.observe(frame)

    def _ask_due(self, now: float) -> bool:
        """At once for a new hang, then every interval; while no verdict is sure, as soon
        as the last ask has been answered."""
        if self._first is None or now - self._asked_at >= TRIAGE_EVERY_SECONDS:
            return True
        result = self.triage.latest() if self.triage is not None else None
        if result is None or result.ask_id != self._asks:
            return False
        verdict = self.current()
        return verdict is None or not verdict.sure

    def _ask(self, now: float, ask: Callable[[int], TriageAsk]) -> None:
        self._asks += 1
        made = ask(self._asks)
        if self._first is None:
            self._first, self._dumps_since, self._first_at = self._asks, made.since, now
        else:  # the same hang: its dumps are as old as its first ask allowed
            made = replace(made, since=self._dumps_since)
        self._asked_at = now
        if self.triage is not None:
            self.triage.request(made)

    def _over(self, now: float, moving: bool, down: Collection[int]) -> bool:
        """This hang's evidence is gone: no rank it names dead is still down, and the job
        keeps moving or nothing has looked stuck for a while."""
        verdict = self.current()
        # Before any verdict, the ranks down when the hang was opened stand for its dead: a
        # hang is not over while they are down, however long its first read takes.
        dead = verdict.dead if verdict is not None else self._first_down
        if any(rank in down for rank in dead):
            return False
        calm = self._calm_since is not None and now - self._calm_since >= CLEAR_SECONDS
        return moving or calm

    def end(self) -> None:
        """The hang is over: its verdicts, even late ones, are no longer shown."""
        self._first, self.since, self._kept, self._dumps_since = None, None, None, None
        self._first_at, self._first_down = None, frozenset()
        self.frozen.reset()

    def current(self) -> HangVerdict | None:
        """The newest finished verdict of this hang, without asking for another."""
        if self._first is None or self.triage is None:
            return None
        result = self.triage.latest()
        if result is None or result.ask_id < self._first:
            return None
        if result.verdict is None:
            # A run that read every rank and found no hang clears the verdict; one that broke
            # or ran out of budget first says nothing new: the last verdict stays, its age
            # shown once it is old.
            if result.complete:
                self._kept = None
            return self.frozen.judge(self._kept)
        if self.since is None:
            # When the hang was first asked about, whichever ask's verdict came first: a
            # loaded machine's late answer, or a replay that judged only its last frame,
            # says when the hang began as a prompt answer would.
            self.since = self._first_at
        self._kept = result.verdict
        return self.frozen.judge(result.verdict)

    def anomaly(self, verdict: HangVerdict, now: float) -> Anomaly:
        """The verdict as an anomaly: on the culprit when sure, else pending on the job,
        saying what evidence it waits for."""
        since = self.since if self.since is not None else now
        summary = verdict.summary
        age = verdict.age(now)
        if age is not None and age >= OLD_VERDICT_SECONDS:
            summary += f" (logs read {age:.0f} s ago)"
        if verdict.sure and verdict.behind:
            return Anomaly("hang", "critical", verdict.behind[0], summary, since)
        return Anomaly("hang", "critical", None, summary, since,
                       awaiting=verdict.awaiting or "evidence from the ranks' logs")

    def suspicion(self, now: float) -> Anomaly | None:
        """Before any verdict: the few GPUs idle while the others spin in a collective, as
        a pending hang on the first of them (the rank the others may be waiting for)."""
        suspects = self.frozen.suspects() if self._first is not None else []
        if not suspects:
            return None
        first = suspects[0]
        ranks = ", ".join(str(gpu.rank) for gpu in suspects)
        noun = "rank" if len(suspects) == 1 else "ranks"
        summary = (f"not sure yet: {noun} {ranks}: GPU idle (SM {first.sm:.0f} %) while the"
                   f" others spin in a collective (SM {first.others:.0f} %): the rank they may"
                   " be waiting for")
        awaiting = ("the watchdogs' timeouts in the logs" if self.triage is not None else
                    "evidence from logs or Flight Recorder dumps (neither is configured)")
        return Anomaly("hang", "critical", first.rank, summary, self.since or first.since,
                       awaiting=awaiting)
