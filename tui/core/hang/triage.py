"""Hang triage: which rank the others wait for, how sure that is, and what is still missing.

When a synchronous job hangs, every rank still alive eventually logs a watchdog timeout for
the collective it is stuck in (``ranktop.tui.core.watchdog`` reads those lines). The rank
the others wait for logs nothing of the kind: it is dead, stuck outside NCCL, or behind.
``triage`` turns every rank's log tail, and the ranks whose metric series vanished, into a
verdict that names a culprit only on evidence:

- A rank is **dead** when its own log shows it died of its own fault (an XID or CUDA error
  before any timeout of its own, or a crash that neither repeats a timeout nor tells of a
  peer gone), or when its series vanished (``gone``) and its log does not show it ended by
  a timeout or by giving up on a peer gone (consequences of the hang: it waited on
  another). A dead rank is sure evidence at once: it is named first, with its cause, and
  not counted among the ranks that timed out, even when its watchdog timed out too. Its
  words say "dead" only where an exit shows (its log's fault, its agent's word); a rank
  whose series only vanished is "not reporting" (a frozen process vanishes too). When
  more than half the ranks vanished with no consequence of a hang in their logs, the job
  itself is going down (every watchdog ends its process after a timeout) and ``gone``
  proves nothing; ranks whose logs show them ended by a timeout or a peer gone are the
  hang's consequences, and their vanishing never unseats the rank they waited for.
- A rank whose agent logged its exit (``ranktop.tui.core.hang.agent_exit``: torchrun's "failed
  (exitcode: -9) local_rank: 2") and whose log shows no consequence of a hang is **dead**
  of its own end, the first to exit first. Its agent, and the other nodes' agents as their
  workers fail, then end the other workers, whose logs just stop: a rank gone without an
  error beside such an exit was **stopped** by its agent, neither dead nor a culprit.
- The other ranks are **live**. A live rank **reported** when it logged a timeout (NCCL's
  watchdog, gloo's or nccl2's), or gave up when a peer went away (NCCL's remote error,
  gloo's connection closed or reset by a peer). The **work** is the collective (process
  group and SeqNum) most of them timed out in.
- A live rank is shown **behind** when it timed out in an earlier collective of that group,
  or logged no timeout but a progress line (the dump signal) whose last enqueued work comes
  before it.
- The verdict is **sure** when a rank is dead, or when every live rank reported or is shown
  behind. Until then it names no culprit: ``awaiting`` says which ranks have yet to speak.
- The **culprits** are the cause: the dead ranks when any died (their peers then time out in
  whatever work each was in, and those differences are evidence, ``lagging``, never culprits
  beside the dead), else the live ranks shown behind.
- A rank with no lines at all (no log found, or a log just rotated with nothing before it)
  is **unread**, never silent: silence is a log, predecessors included, with no timeout.

Lines before a rank's last NCCL init or torchrun attempt marker (a restart) are ignored.

A triage may read only some ranks' logs (``skipped``: the rest were not reached within its
time and memory budget). Those ranks are unread, so the verdict cannot be sure unless a
rank is dead, and then it names only the dead: a rank shown behind the others is judged
against the work most ranks timed out in, which a sample of them does not settle. A
vanished rank whose log was not read is not called dead: its log might show its watchdog
ending it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from ..watchdog import WatchdogReport, ending, parse_watchdog
from .agent_exit import AgentExit
from .checkpoint import DEFAULT, Checkpoint, newer, newest_in_lines
from .flight_triage import FlightVerdict
from .log_gaps import LogGaps
from .scan import RankLog, Work, same_pg, scan
from .summary import Facts, evidence, evidence_lines

__all__ = ["HangVerdict", "WatchdogReport", "parse_watchdog", "triage"]

GONE_AT_MOST = 0.5  # vanished series name dead ranks only while they are at most this share


@dataclass(frozen=True)
class HangVerdict:
    """Who died, who timed out, who did not, and who the others are waiting for."""

    reporting: list[int]  # live ranks that logged a timeout (or gave up on a peer)
    silent: list[int]  # live ranks whose lines, predecessors included, hold no timeout
    behind: list[int]  # the culprits: the dead, else the live ranks behind; empty if not sure
    last_completed: dict[int, int]  # per rank that logged it
    evidence: dict[int, list[str]]  # per rank: the lines behind the verdict, a few each
    summary: str  # one line for the screen: the verdict, its evidence and its strength
    dead: list[int] = field(default_factory=list)  # ranks whose process died of their own
    sure: bool = True  # False: no culprit named yet, see ``awaiting``
    awaiting: str = ""  # what evidence is still missing when not sure
    unread: list[int] = field(default_factory=list)  # live ranks with no log lines at all
    ranks_read: int = 0  # ranks whose logs the triage reached, of ``ranks_total``
    ranks_total: int = 0
    as_of: float | None = None  # the time of the poll that asked for the logs to be read
    flight: FlightVerdict | None = None  # what the Flight Recorder dumps say, when read
    disagreement: str = ""  # where the logs and the dumps blame different ranks
    awaited: list[int] = field(default_factory=list)  # live ranks yet to speak (not sure)
    lagging: list[int] = field(default_factory=list)  # live ranks behind, beside a death:
    # evidence of what it did to its peers, not culprits
    work: str = ""  # the collective most ranks timed out in: " in ALLREDUCE SeqNum 8812"
    # What could not be read (no log configured, no file for some ranks), set by the log
    # reader (ranktop.tui.logs.triage_worker), never a fact about the job.
    log_gaps: LogGaps | None = None
    checkpoint: Checkpoint | None = None  # the newest "saved checkpoint" line read
    gave_up: list[int] = field(default_factory=list)  # reporting ranks that gave up on a
    # peer gone without a timeout of their own: a peer died, none is frozen
    stopped: list[int] = field(default_factory=list)  # gone without an error beside a
    # rank whose agent logged its exit: ended by their agent, not culprits

    @property
    def complete(self) -> bool:
        """Every rank's logs were read."""
        return self.ranks_read >= self.ranks_total

    def age(self, now: float) -> float | None:
        """Seconds since the poll that asked for this verdict's logs (None: unknown)."""
        return None if self.as_of is None else max(0.0, now - self.as_of)


def triage(lines_by_rank: Mapping[int, Iterable[str]], world_size: int,
           gone: Collection[int] = (), skipped: Collection[int] = (),
           exits: Mapping[int, AgentExit] | None = None) -> HangVerdict | None:
    """The hang verdict from each rank's log lines (oldest first) and the ranks whose metric
    series vanished; None when no rank timed out and none is dead. ``skipped``: ranks whose
    logs were not read at all (the triage ran out of budget), their lines ignored.

    A line counts for the rank it was read for, unless PyTorch's ``[rankN]:`` prefix names
    another rank of the job (a merged log). Ranks outside ``range(world_size)`` are ignored.
    """
    scanned = HangScan(world_size)
    unreached = set(skipped)
    scanned.add({rank: lines for rank, lines in lines_by_rank.items() if rank not in unreached})
    return scanned.verdict(gone, skipped, exits)


class HangScan:
    """The ranks' logs scanned as they come, a batch at a time (``triage`` in parts): each
    rank's lines are kept only as far as its evidence can use them, so what is held does not
    grow with the lines read."""

    def __init__(self, world_size: int, checkpoint_pattern: re.Pattern[str] = DEFAULT
                 ) -> None:
        self.world_size = world_size
        self.logs = {rank: RankLog() for rank in range(world_size)}
        self.checkpoint_pattern = checkpoint_pattern
        self.checkpoint: Checkpoint | None = None  # the newest saved, of the lines added

    def add(self, lines_by_rank: Mapping[int, Iterable[str]]) -> None:
        """Scan these ranks' lines (oldest first); each rank once."""
        for rank, lines in lines_by_rank.items():
            if 0 <= rank < self.world_size:
                lines = list(lines)
                found = newest_in_lines(lines, self.checkpoint_pattern, rank)
                self.checkpoint = newer(self.checkpoint, found)
                scan(rank, lines, self.logs)
                log = self.logs[rank]
                log.end = ending(log.lines, log.first_timeout)
                log.lines = evidence_lines(log.lines, log.end.line)

    def verdict(self, gone: Collection[int] = (), skipped: Collection[int] = (),
                exits: Mapping[int, AgentExit] | None = None) -> HangVerdict | None:
        """The verdict on what was added; ``gone``, ``skipped`` and ``exits`` (the exits
        the ranks' agents logged) as for ``triage``."""
        world_size, logs = self.world_size, self.logs
        unreached = {rank for rank in skipped if 0 <= rank < world_size}
        vanished = sorted({rank for rank in gone if 0 <= rank < world_size})
        # Those whose logs show them ended by the hang (a timeout, a peer gone) are its
        # consequences: they confirm the verdict, never dilute it.
        unexplained = [r for r in vanished if not logs[r].end.consequence or r in unreached]
        trusted = vanished if len(unexplained) <= world_size * GONE_AT_MOST else []
        exited = {r: e for r, e in (exits or {}).items()
                  if 0 <= r < world_size and not logs[r].end.consequence}
        faulted = {r for r, log in logs.items() if log.end.kind == "fault"}
        stopped = sorted(r for r in vanished if r not in exited and r not in faulted
                         and not logs[r].end.consequence) if exited else []
        dead = sorted({r for r in trusted if not logs[r].end.consequence and r not in unreached
                       and r not in stopped} | faulted | set(exited),
                      key=lambda r: _first_exit(r, exited))
        dead_set = set(dead) | set(stopped)
        live = [rank for rank in range(world_size) if rank not in dead_set]
        reporting = [r for r in live if logs[r].timed_out() or logs[r].end.consequence]
        if not reporting and not dead:
            return None
        work = _work(reporting, logs)
        told = set(reporting)
        why = {} if unreached else _shown_behind(live, told, logs, work)
        quiet = [r for r in live if r not in told]
        awaited = [r for r in quiet if r not in why]
        sure = bool(dead) or not awaited
        facts = Facts(logs, dead, reporting, work, why, awaited, set(trusted), vanished,
                      len(unreached), exited, stopped)
        return HangVerdict(
            reporting=reporting,
            silent=[r for r in quiet if logs[r].read],
            behind=(dead or sorted(why)) if sure else [],
            last_completed={r: v for r, log in logs.items()
                            if (v := log.lowest("last_completed")) is not None},
            evidence=evidence(facts),
            summary=facts.summary(sure),
            dead=dead,
            sure=sure,
            awaiting="" if sure else facts.waiting(),
            unread=[r for r in quiet if not logs[r].read],
            awaited=[] if sure else awaited,
            lagging=sorted(why) if dead else [],
            work=facts.where(),
            ranks_read=world_size - len(unreached),
            ranks_total=world_size,
            checkpoint=self.checkpoint,
            gave_up=[r for r in reporting
                     if logs[r].end.kind == "peer" and not logs[r].timed_out()],
            stopped=stopped,
        )


def _first_exit(rank: int, exited: Mapping[int, AgentExit]) -> tuple[int, float, int]:
    """The order of the dead: those whose agent logged their exit, the first to exit
    first, then the others by rank."""
    found = exited.get(rank)
    return (0, found.seconds, rank) if found is not None else (1, 0.0, rank)


def _work(reporting: list[int], logs: dict[int, RankLog]) -> Work | None:
    """The collective most reporting ranks timed out in."""
    stuck = {r: s for r in reporting if (s := logs[r].stuck()) is not None}
    if not stuck:
        return None
    (pg, seq), count = Counter((s.pg, s.seq) for s in stuck.values()).most_common(1)[0]
    ops = Counter(r.op for rank, s in stuck.items() if (s.pg, s.seq) == (pg, seq)
                  for r in logs[rank].reports if r.op and r.seq == seq)
    return Work(pg, seq, ops.most_common(1)[0][0] if ops else "", count)


def _shown_behind(live: list[int], reporting: set[int], logs: dict[int, RankLog],
                  work: Work | None) -> dict[int, str]:
    """Live ranks whose own lines show them behind the work, and what shows it."""
    if work is None or work.seq is None:
        return {}
    why: dict[int, str] = {}
    for rank in live:
        log = logs[rank]
        stuck = log.stuck()
        if stuck is not None:
            if same_pg(stuck.pg, work.pg) and stuck.seq is not None and stuck.seq < work.seq:
                why[rank] = f"timed out at SeqNum {stuck.seq}, the others at {work.seq}"
            continue
        if rank in reporting:
            continue
        enqueued = log.lowest("last_enqueued", work.pg)
        if enqueued is not None and enqueued < work.seq:
            done = log.lowest("last_completed", work.pg)
            why[rank] = (f"its last completed work is {done}" if done == enqueued
                         else f"its last enqueued work is {enqueued}")
    if why or any(r not in reporting for r in live):
        return why
    return _lowest_progress(live, logs, work.pg)


def _lowest_progress(ranks: list[int], logs: dict[int, RankLog], pg: str) -> dict[int, str]:
    """Ranks that completed less than the others, when all stopped at the same work."""
    for name in ("last_completed", "last_enqueued"):
        progress = {r: v for r in ranks if (v := logs[r].lowest(name, pg)) is not None}
        if len(set(progress.values())) > 1:
            low, high = min(progress.values()), max(progress.values())
            what = name.replace("_", " ")
            return {r: f"is behind: {what} {low}, the others {high}"
                    for r, v in progress.items() if v == low}
    return {}
