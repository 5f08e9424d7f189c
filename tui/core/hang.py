"""Hang triage: which rank the others wait for, how sure that is, and what is still missing.

When a synchronous job hangs, every rank still alive eventually logs a watchdog timeout for
the collective it is stuck in (``ranktop.tui.core.watchdog`` reads those lines). The rank
the others wait for logs nothing of the kind: it is dead, stuck outside NCCL, or behind.
``triage`` turns every rank's log tail, and the ranks whose metric series vanished, into a
verdict that names a culprit only on evidence:

- A rank is **dead** when its own log shows it died of its own fault (an XID or CUDA error
  before any timeout of its own, or a crash that neither repeats a timeout nor tells of a
  peer gone), or when its series vanished (``gone``) and its log does not show its watchdog
  ending it after a timeout. A dead rank is sure evidence at once: it is named first, with
  its cause, and not counted among the ranks that timed out, even when its watchdog timed
  out too. When more than half the ranks vanished, the job itself is going down (every
  watchdog ends its process after a timeout) and ``gone`` proves nothing.
- The other ranks are **live**. A live rank **reported** when it logged a timeout, or gave
  up when a peer went away (NCCL's remote error). The **work** is the collective (process
  group and SeqNum) most of them timed out in.
- A live rank is shown **behind** when it timed out in an earlier collective of that group,
  or logged no timeout but a progress line (the dump signal) whose last enqueued work comes
  before it.
- The verdict is **sure** when a rank is dead, or when every live rank reported or is shown
  behind. Until then it names no culprit: ``awaiting`` says which ranks have yet to speak.
- A rank with no lines at all (no log found, or a log just rotated with nothing before it)
  is **unread**, never silent: silence is a log, predecessors included, with no timeout.

Lines before a rank's last NCCL init (a restart) are ignored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from ranktop.tui.core.flight_triage import FlightVerdict
from ranktop.tui.core.watchdog import (
    MARKERS,
    Ending,
    WatchdogReport,
    ending,
    parse_report,
    parse_watchdog,
)

__all__ = ["HangVerdict", "WatchdogReport", "parse_watchdog", "triage"]

# A rank whose log shows NCCL starting again after a timeout has been restarted.
_RESTART = "Init COMPLETE"
_NOTABLE = ("WARN", "rror", "ailure", "xception", "terminate", "Xid", "Traceback")
EVIDENCE_PER_RANK = 3
REPORTS_PER_RANK = 8  # the newest few: a hang makes each rank log only a handful
NAMED_IN_SUMMARY = 5
GONE_AT_MOST = 0.5  # vanished series name dead ranks only while they are at most this share


@dataclass(frozen=True)
class HangVerdict:
    """Who died, who timed out, who did not, and who the others are waiting for."""

    reporting: list[int]  # live ranks that logged a timeout (or gave up on a peer)
    silent: list[int]  # live ranks whose lines, predecessors included, hold no timeout
    behind: list[int]  # the culprits, dead ranks first; empty when not sure
    last_completed: dict[int, int]  # per rank that logged it
    evidence: dict[int, list[str]]  # per rank: the lines behind the verdict, a few each
    summary: str  # one line for the screen: the verdict, its evidence and its strength
    dead: list[int] = field(default_factory=list)  # ranks whose process died of their own
    sure: bool = True  # False: no culprit named yet, see ``awaiting``
    awaiting: str = ""  # what evidence is still missing when not sure
    unread: list[int] = field(default_factory=list)  # live ranks with no log lines at all
    flight: FlightVerdict | None = None  # what the Flight Recorder dumps say, when read
    disagreement: str = ""  # where the logs and the dumps blame different ranks


@dataclass(frozen=True)
class _Work:
    pg: str
    seq: int | None
    op: str
    ranks: int  # how many reporting ranks timed out in it


class _RankLog:
    """What triage gathered about one rank."""

    def __init__(self) -> None:
        self.read = False  # it had a non-blank line, before any restart cut
        self.lines: list[str] = []
        self.reports: list[WatchdogReport] = []
        self.first_timeout: int | None = None  # index in lines
        self.end = Ending("", "", "")

    def timed_out(self) -> bool:
        return any(r.timed_out for r in self.reports)

    def stuck(self) -> WatchdogReport | None:
        """The collective it first timed out in."""
        return next((r for r in self.reports if r.timed_out), None)

    def lowest(self, name: str, pg: str | None = None) -> int | None:
        values = [getattr(r, name) for r in self.reports
                  if getattr(r, name) is not None and (pg is None or _same_pg(r.pg, pg))]
        return min(values) if values else None


def triage(lines_by_rank: Mapping[int, Iterable[str]], world_size: int,
           gone: Collection[int] = ()) -> HangVerdict | None:
    """The hang verdict from each rank's log lines (oldest first) and the ranks whose metric
    series vanished; None when no rank timed out and none is dead.

    A line counts for the rank it was read for, unless PyTorch's ``[rankN]:`` prefix names
    another rank of the job (a merged log). Ranks outside ``range(world_size)`` are ignored.
    """
    logs = {rank: _RankLog() for rank in range(world_size)}
    for rank, lines in lines_by_rank.items():
        if 0 <= rank < world_size:
            _scan(rank, list(lines), logs)
    for log in logs.values():
        log.end = ending(log.lines, log.first_timeout)
    vanished = sorted({rank for rank in gone if 0 <= rank < world_size})
    trusted = vanished if len(vanished) <= world_size * GONE_AT_MOST else []
    dead = sorted({r for r in trusted if logs[r].end.kind != "timeout"}
                  | {r for r, log in logs.items() if log.end.kind == "fault"})
    dead_set = set(dead)
    live = [rank for rank in range(world_size) if rank not in dead_set]
    reporting = [r for r in live
                 if logs[r].timed_out() or logs[r].end.kind in ("peer", "timeout")]
    if not reporting and not dead:
        return None
    work = _work(reporting, logs)
    told = set(reporting)
    why = _shown_behind(live, told, logs, work)
    quiet = [r for r in live if r not in told]
    awaited = [r for r in quiet if r not in why]
    sure = bool(dead) or not awaited
    facts = _Facts(logs, dead, reporting, work, why, awaited, set(trusted), vanished)
    return HangVerdict(
        reporting=reporting,
        silent=[r for r in quiet if logs[r].read],
        behind=[*dead, *sorted(why)] if sure else [],
        last_completed={r: v for r, log in logs.items()
                        if (v := log.lowest("last_completed")) is not None},
        evidence=_evidence(facts),
        summary=facts.summary(sure),
        dead=dead,
        sure=sure,
        awaiting="" if sure else facts.waiting(),
        unread=[r for r in quiet if not logs[r].read],
    )


def _scan(rank: int, lines: list[str], logs: dict[int, _RankLog]) -> None:
    """Parse one rank's lines, looking closely only at the few that can matter."""
    own = logs[rank]
    own.read = own.read or any(line.strip() for line in lines)
    blob = "\n".join(lines)
    restart = blob.rfind(_RESTART)
    if restart >= 0:
        lines = lines[blob.count("\n", 0, restart) + 1:]
    own.lines = lines
    if not any(marker in blob for marker in MARKERS):
        return
    found: list[WatchdogReport] = []
    first, second = MARKERS
    for index, line in enumerate(lines):
        if first not in line and second not in line:
            continue
        parsed = parse_report(line)
        if parsed is None:
            continue
        report, is_global = parsed
        if is_global and report.rank != rank and report.rank in logs:
            logs[report.rank].reports.append(report)  # a merged log: that rank's line
            continue
        if report.timed_out and own.first_timeout is None:
            own.first_timeout = index
        found.append(report)
    own.reports.extend(found[-REPORTS_PER_RANK:])


def _same_pg(a: str, b: str) -> bool:
    return not a or not b or a == b  # a line that names no group may be any


def _work(reporting: list[int], logs: dict[int, _RankLog]) -> _Work | None:
    """The collective most reporting ranks timed out in."""
    stuck = {r: s for r in reporting if (s := logs[r].stuck()) is not None}
    if not stuck:
        return None
    (pg, seq), count = Counter((s.pg, s.seq) for s in stuck.values()).most_common(1)[0]
    ops = Counter(r.op for rank, s in stuck.items() if (s.pg, s.seq) == (pg, seq)
                  for r in logs[rank].reports if r.op and r.seq == seq)
    return _Work(pg, seq, ops.most_common(1)[0][0] if ops else "", count)


def _shown_behind(live: list[int], reporting: set[int], logs: dict[int, _RankLog],
                  work: _Work | None) -> dict[int, str]:
    """Live ranks whose own lines show them behind the work, and what shows it."""
    if work is None or work.seq is None:
        return {}
    why: dict[int, str] = {}
    for rank in live:
        log = logs[rank]
        stuck = log.stuck()
        if stuck is not None:
            if _same_pg(stuck.pg, work.pg) and stuck.seq is not None and stuck.seq < work.seq:
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


def _lowest_progress(ranks: list[int], logs: dict[int, _RankLog], pg: str) -> dict[int, str]:
    """Ranks that completed less than the others, when all stopped at the same work."""
    for name in ("last_completed", "last_enqueued"):
        progress = {r: v for r in ranks if (v := logs[r].lowest(name, pg)) is not None}
        if len(set(progress.values())) > 1:
            low, high = min(progress.values()), max(progress.values())
            what = name.replace("_", " ")
            return {r: f"is behind: {what} {low}, the others {high}"
                    for r, v in progress.items() if v == low}
    return {}


@dataclass
class _Facts:
    """What the summary and the evidence are made from."""

    logs: dict[int, _RankLog]
    dead: list[int]
    reporting: list[int]
    work: _Work | None
    why: dict[int, str]
    awaited: list[int]
    trusted: set[int]
    vanished: list[int]

    def summary(self, sure: bool) -> str:
        live = len(self.logs) - len(self.dead)
        told = f"{len(self.reporting)} of {live} live ranks"
        if not sure:
            text = f"not sure yet: {told} logged a timeout{self.where()}; {self.waiting()}"
        elif self.dead:
            text = f"{self._dead()}: " + (f"{told} timed out{self.where()}" if self.reporting
                                          else "no live rank has logged a timeout yet")
            if self.awaited:
                text += f"; {_count(len(self.awaited), 'live rank')} not yet"
            if self.why:
                text += f"; {self._behind()}"
        elif self.why:
            them = "it" if len(self.why) == 1 else "them"
            text = f"{self._behind()}: the others are waiting for {them}"
        else:
            text = (f"{told} timed out{self.where()}: all stopped at the same work, no one"
                    " rank stands out (network or NCCL?)")
        return text + self._peers() + self._going_down()

    def where(self) -> str:
        work = self.work
        if work is None:
            return ""
        parts = [part for part in (work.op, "" if work.seq is None else f"SeqNum {work.seq}")
                 if part]
        timed = sum(1 for r in self.reporting if self.logs[r].timed_out())
        where = " in " + " ".join(parts) if parts else ""
        return where if work.ranks == timed or not where else f"{where} ({work.ranks} of them)"

    def waiting(self) -> str:
        unread = sum(1 for r in self.awaited if not self.logs[r].read)
        text = f"waiting for {len(self.awaited)} more ({_ranks(self.awaited)})"
        return text + (f", no log read for {unread} of them" if unread else "")

    def _dead(self) -> str:
        shown = self.dead[:NAMED_IN_SUMMARY]
        causes = [f"{_cause(r, self.logs[r].end, r in self.trusted)}" for r in shown]
        if len(self.dead) == 1:
            return f"rank {self.dead[0]} is dead ({causes[0]})"
        listed = "; ".join(f"{r}: {c}" for r, c in zip(shown, causes, strict=True))
        more = f"; +{len(self.dead) - len(shown)}" if len(self.dead) > len(shown) else ""
        return f"ranks {_ranks(self.dead, False)} are dead ({listed}{more})"

    def _behind(self) -> str:
        ranks = sorted(self.why)
        if all(r not in self.reporting for r in ranks):
            seq = self.work.seq if self.work else None
            noun = (f"rank {ranks[0]} is the only rank" if len(ranks) == 1
                    else f"{_ranks(ranks)} are the only ranks")
            single = len(ranks) == 1
            reasons = "; ".join(self.why[r] if single else f"rank {r}: {self.why[r]}"
                                for r in ranks[:NAMED_IN_SUMMARY])
            return f"{noun} without a timeout at SeqNum {seq}; {reasons}"
        return "; ".join(f"rank {r} {self.why[r]}" for r in ranks[:NAMED_IN_SUMMARY])

    def _peers(self) -> str:
        peers = [r for r in self.reporting if self.logs[r].end.kind == "peer"]
        return f"; {_ranks(peers)} gave up on a peer (remote error)" if peers else ""

    def _going_down(self) -> str:
        if not self.vanished or self.trusted:
            return ""
        return (f"; the series of {len(self.vanished)} ranks vanished: the job is going down,"
                " which names no rank")


def _cause(rank: int, end: Ending, vanished: bool) -> str:
    causes = [end.cause] if end.kind == "fault" else []
    if vanished:
        causes.append("its series vanished")
    return ", ".join(causes)


def _evidence(facts: _Facts) -> dict[int, list[str]]:
    logs = facts.logs
    evidence = {r: _report_lines(logs[r]) or _own_words(logs[r]) for r in facts.reporting}
    for rank in [*facts.dead, *facts.why, *facts.awaited]:
        if logs[rank].read or rank in facts.dead:
            evidence[rank] = _own_words(logs[rank])
    return evidence


def _report_lines(log: _RankLog) -> list[str]:
    """A rank's distinct reports (a crash's what() repeats the timeout), a few."""
    seen, lines = set(), []
    for report in log.reports:
        key = (report.seq, report.op, report.last_enqueued, report.last_completed,
               report.timed_out)
        if key not in seen:
            seen.add(key)
            lines.append(report.line)
    return lines[:EVIDENCE_PER_RANK]


def _own_words(log: _RankLog) -> list[str]:
    """A rank's own words: its fatal line, its reports, else its errors, else its last lines."""
    first = [log.end.line] if log.end.line else []
    if log.reports and not first:
        return _report_lines(log)
    lines = [line.rstrip("\r\n") for line in log.lines if line.strip()]
    notable = [line for line in lines if any(word in line for word in _NOTABLE)
               and line not in first]
    if first:
        return [*first, *notable[1 - EVIDENCE_PER_RANK:]] if notable else first
    if len(notable) > EVIDENCE_PER_RANK:  # the first error is often the cause, the last the end
        return [notable[0], *notable[1 - EVIDENCE_PER_RANK:]]
    return (notable or lines)[-EVIDENCE_PER_RANK:]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _ranks(ranks: list[int], with_noun: bool = True) -> str:
    shown = ", ".join(str(r) for r in ranks[:NAMED_IN_SUMMARY])
    more = f", ... (+{len(ranks) - NAMED_IN_SUMMARY})" if len(ranks) > NAMED_IN_SUMMARY else ""
    if not with_noun:
        return shown + more
    return f"{'rank' if len(ranks) == 1 else 'ranks'} {shown}{more}"
