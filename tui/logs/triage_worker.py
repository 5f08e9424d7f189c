"""Hang triage in a thread of its own, bounded: the polling path asks and never waits.

A ``TriageWorker`` takes asks (``ranktop.tui.core.hang.watch.TriageAsk``) and reads the
ranks' log tails in its own thread: the suspects first (ranks down, or flagged by an
anomaly), then the others by rank, until every rank is read or the run's budget is spent
(``TriageLimits``: seconds, bytes in all, bytes from each rank's own file). The lines come
in batches of ranks, each scanned (``ranktop.tui.core.hang.triage.HangScan``) and let go before the
next is read, so what a run holds is a batch's lines and a few lines a rank. It then judges
what it read (sure of less when ranks were left unread) and publishes the result.

Asks that come while a run is under way wait, the newest replacing an older one: at most
one run and one ask at a time, and a run starts only once the worker has rested as long as
its last run took. The thread ends when there is nothing to do, and a new ask starts
another.

``wait`` lets `ranktop report`, a one-shot, wait for the verdict up to a deadline.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..core.hang.agent_exit import agent_exits
from ..core.hang.checkpoint import DEFAULT
from ..core.hang.flight_triage import FlightVerdict
from ..core.hang.join import join_verdicts
from ..core.hang.log_gaps import LogGaps
from ..core.hang.triage import HangScan, HangVerdict
from ..core.hang.watch import TriageAsk, TriageResult
from ..core.model import RankMap
from ..core.text import plain
from .attempts import without_next_attempt
from .collect import ReadBudget
from .line_time import lines_until

KB, MB = 1024, 1024 * 1024

# Reads the ranks named, in that order, within the budget, in batches of about the size
# given; a rank it did not reach is absent, one for which no file was found has None.
Reader = Callable[[RankMap, Sequence[int], ReadBudget, int],
                  Iterable[Mapping[int, list[str] | None]]]
# Judges the ranks' Flight Recorder dumps written since a time (and by another, for a past
# moment): (world size, since, until) -> verdict.
Dumps = Callable[[int, float | None, float | None], FlightVerdict | None]
# The agents' failure lines of each node's console (``ranktop.tui.logs.agent_console``),
# from a while before a time up to another: (since, until) -> lines by console name.
Agents = Callable[[float | None, float | None], Mapping[str, list[str]]]
BATCH_RANKS = 1024
# After a run, the next waits this long per second the run took: while a job stays hung,
# re-reading its logs takes at most half a core, whatever the size of the job.
REST_PER_RUN_SECOND = 1.0


@dataclass(frozen=True)
class TriageLimits:
    """What one triage run may take. Lines kept are at most the bytes read."""

    seconds: float = 10.0  # reading stops here; what was read is judged
    max_bytes: int = 512 * MB  # read from all files together (held: a batch's worth)
    rank_bytes: int = 32 * KB  # read from each rank's own file, back from its end


class TriageWorker:
    """Runs asked-for triages one at a time in a thread; the newest result is ``latest``."""

    def __init__(self, read: Reader | None, limits: TriageLimits = TriageLimits(),
                 clock: Callable[[], float] = time.monotonic, dumps: Dumps | None = None,
                 log_spec: str = "", checkpoint_pattern: re.Pattern[str] = DEFAULT,
                 agents: Agents | None = None) -> None:
        self.read = read
        self.agents = agents
        self.checkpoint_pattern = checkpoint_pattern  # a "saved checkpoint" line
        self.log_spec = log_spec  # the spec ``read`` follows, for what it could not find
        self.dumps = dumps
        self.limits = limits
        self.clock = clock
        self.runs = 0  # finished runs
        self.error = ""  # what broke the last run that failed
        self._lock = threading.Condition()
        self._asked: TriageAsk | None = None
        self._busy = False
        self._latest: TriageResult | None = None
        self._thread: threading.Thread | None = None
        self._rested_at = 0.0  # no run starts before this (time.monotonic)
        self.until: float | None = None
        """Set for a past moment: lines stamped and dumps written after it are not read."""

    def request(self, ask: TriageAsk) -> None:
        """Ask for a run (it replaces an ask not yet started); returns at once."""
        with self._lock:
            self._asked = ask
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="hang-triage",
                                                daemon=True)
                self._thread.start()

    def latest(self) -> TriageResult | None:
        with self._lock:
            return self._latest

    def wait(self, timeout: float) -> bool:
        """Wait until no run is under way or asked for, at most ``timeout`` seconds; whether
        it came to that."""
        with self._lock:
            return self._lock.wait_for(lambda: self._thread is None, timeout)

    def run(self, ask: TriageAsk) -> TriageResult:
        """One triage, in the caller's thread."""
        started = self.clock()
        total = len(ask.rank_map)
        limits = self.limits
        budget = ReadBudget(started + limits.seconds, limits.max_bytes, limits.rank_bytes,
                            self.clock)
        scanned = HangScan(total, self.checkpoint_pattern)
        reached: set[int] = set()
        unfound: list[int] = []
        after: list[int] = []  # ranks whose lines read all come after the moment
        order = reading_order(ask.suspects, total)
        for part in self.read(ask.rank_map, order, budget, BATCH_RANKS) if self.read else ():
            unfound.extend(rank for rank, lines in part.items() if lines is None)
            as_of = {rank: self._as_of(lines) for rank, lines in part.items()
                     if lines is not None}
            after.extend(rank for rank, lines in as_of.items() if part[rank] and not lines)
            scanned.add(as_of)
            reached.update(part)
        skipped = [rank for rank in range(total) if rank not in reached]
        exits = agent_exits(self.agents(ask.since, self.until), ask.rank_map) \
            if self.agents is not None else {}
        verdict = scanned.verdict(ask.gone, skipped, exits) if self.read else None
        if self.dumps is not None:
            verdict = join_verdicts(verdict, self.dumps(total, ask.since, self.until))
        if verdict is not None:
            gaps = LogGaps(self.read is not None, plain(self.log_spec), tuple(sorted(unfound)),
                           tuple(sorted(after)))
            verdict = replace(verdict, as_of=ask.as_of, checkpoint=scanned.checkpoint)
            verdict = with_gaps(verdict, gaps)
        return TriageResult(ask.ask_id, ask.as_of, verdict, total - len(skipped), total,
                            budget.spent, self.clock() - started)

    def _as_of(self, lines: list[str]) -> list[str]:
        if self.until is None:
            return lines
        return without_next_attempt(lines_until(lines, self.until))

    def _serve(self) -> None:
        while True:
            with self._lock:
                if self._asked is None:  # nothing to do: end now, not after a rest
                    self._thread = None
                    self._lock.notify_all()
                    return
            time.sleep(max(0.0, self._rested_at - time.monotonic()))
            with self._lock:  # the newest ask, which may have replaced one during the rest
                ask, self._asked = self._asked, None
            began = time.monotonic()
            try:
                result = self.run(ask)
            except Exception as error:  # a bug must not leave the triage for dead
                result = TriageResult(ask.ask_id, ask.as_of, None, 0, len(ask.rank_map))
                self.error = f"{error.__class__.__name__}: {error}"
            ended = time.monotonic()
            self._rested_at = ended + (ended - began) * REST_PER_RUN_SECOND
            with self._lock:
                self._latest = result
                self.runs += 1
                self._lock.notify_all()


def with_gaps(verdict: HangVerdict, gaps: LogGaps) -> HangVerdict:
    """The verdict, saying what of the logs could not be read."""
    if not gaps:
        return verdict
    return replace(verdict, log_gaps=gaps, summary=f"{verdict.summary}; {gaps.note()}")


def reading_order(suspects: Sequence[int], total: int) -> list[int]:
    """Every rank of ``range(total)`` once: the suspects first, in their order, then the rest."""
    first = [rank for rank in dict.fromkeys(suspects) if 0 <= rank < total]
    chosen = set(first)
    return [*first, *(rank for rank in range(total) if rank not in chosen)]
