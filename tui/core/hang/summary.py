"""The words of a hang verdict: its one-line summary, what it still waits for, and the few
lines of each rank's log shown as evidence."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate

from ..text import ranks_named
from ..watchdog import Ending
from .agent_exit import AgentExit
from .scan import RankLog, Work

_NOTABLE = ("WARN", "rror", "ailure", "xception", "terminate", "Xid", "Traceback")
_NOTABLE_WORD = re.compile("|".join(map(re.escape, _NOTABLE)))
EVIDENCE_PER_RANK = 3
NAMED_IN_SUMMARY = 5

@dataclass
class Facts:
    """What the summary and the evidence are made from."""

    logs: dict[int, RankLog]
    dead: list[int]
    reporting: list[int]
    work: Work | None
    why: dict[int, str]
    awaited: list[int]
    trusted: set[int]
    vanished: list[int]
    skipped: int = 0  # ranks whose logs were not reached within the triage's budget
    exits: dict[int, AgentExit] = field(default_factory=dict)  # of the dead, by their agent
    stopped: list[int] = field(default_factory=list)  # ended by their agent beside a death

    def summary(self, sure: bool) -> str:
        live = len(self.logs) - len(self.dead) - len(self.stopped)
        told = f"{len(self.reporting)} of {live} live ranks"
        if not sure:
            text = f"not sure yet: {told} logged a timeout{self.where()}; {self.waiting()}"
        elif self.dead:
            # "timed out" only of the ranks that logged a timeout: those that gave up on a
            # peer gone are said so (``_peers``)
            timed = sum(1 for r in self.reporting if self.logs[r].timed_out())
            text = f"{self._dead()}: " + (
                f"{timed} of {live} live ranks timed out{self.where()}" if timed
                else "no live rank timed out" if self.reporting else self._no_timeout())
            if self.awaited and self.reporting:  # with none reporting, already said
                text += (f"; {count(len(self.awaited), 'live rank')} "
                         f"{'has' if len(self.awaited) == 1 else 'have'} "
                         f"{'not timed out yet' if timed else 'said nothing of it yet'}")
            if self.why:
                text += f"; also seen, not culprits: {self._behind()}"
        elif self.why:
            them = "it" if len(self.why) == 1 else "them"
            text = f"{self._behind()}: the others are waiting for {them}"
        else:
            text = (f"{told} timed out{self.where()}: all stopped at the same work, no one"
                    " rank stands out (network or NCCL?)")
        return (text + self._peers() + self._stopped() + self._going_down()
                + self._partial())

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
        text = f"waiting for {len(self.awaited)} more ({ranks_named(self.awaited)})"
        return text + (f", no log read for {unread} of them" if unread else "")

    def _dead(self) -> str:
        """The dead ranks and their causes: "dead" only where an exit shows (its own log's
        end, its agent's word); a rank whose series only vanished is "not reporting" (a
        frozen process vanishes too)."""
        shown = self.dead[:NAMED_IN_SUMMARY]
        causes = [_cause(r, self.logs[r].end, r in self.trusted, self.exits.get(r))
                  for r in shown]
        exited = [self._exited(r) for r in self.dead]
        if len(self.dead) == 1:
            state = "is dead" if exited[0] else "is not reporting"
            return f"rank {self.dead[0]} {state} ({causes[0]})"
        state = "are dead" if all(exited) else "are not reporting" if not any(exited) \
            else "are down"
        listed = "; ".join(f"{r}: {c}" for r, c in zip(shown, causes, strict=True))
        more = f"; +{len(self.dead) - len(shown)}" if len(self.dead) > len(shown) else ""
        return f"ranks {ranks_named(self.dead, False)} {state} ({listed}{more})"

    def _exited(self, rank: int) -> bool:
        return rank in self.exits or self.logs[rank].end.kind == "fault"

    def _stopped(self) -> str:
        if not self.stopped:
            return ""
        if len(self.stopped) == 1:
            return f"; rank {self.stopped[0]} was stopped by its agent"
        return f"; {ranks_named(self.stopped)} were stopped by their agents"

    def _no_timeout(self) -> str:
        # A log that could not be read says nothing about the job: say which it is.
        dead = set(self.dead)
        if any(log.read for rank, log in self.logs.items() if rank not in dead):
            return "no live rank has logged a timeout yet"
        return "no live rank's log was read"

    def _behind(self) -> str:
        ranks = sorted(self.why)
        if all(r not in self.reporting for r in ranks):
            seq = self.work.seq if self.work else None
            noun = (f"rank {ranks[0]} is the only rank" if len(ranks) == 1
                    else f"{ranks_named(ranks)} are the only ranks")
            single = len(ranks) == 1
            reasons = "; ".join(self.why[r] if single else f"rank {r}: {self.why[r]}"
                                for r in ranks[:NAMED_IN_SUMMARY])
            return f"{noun} without a timeout at SeqNum {seq}; {reasons}"
        return "; ".join(f"rank {r} {self.why[r]}" for r in ranks[:NAMED_IN_SUMMARY])

    def _peers(self) -> str:
        peers = [r for r in self.reporting if self.logs[r].end.kind == "peer"]
        return f"; {ranks_named(peers)} gave up on a peer (remote error)" if peers else ""

    def _partial(self) -> str:
        if not self.skipped:
            return ""
        total = len(self.logs)
        return (f"; logs read for {total - self.skipped:,} of {total:,} ranks (the rest not"
                " reached in the time and memory a triage may take)")

    def _going_down(self) -> str:
        if not self.vanished or self.trusted:
            return ""
        return (f"; the series of {len(self.vanished)} ranks vanished: the job is going down,"
                " which names no rank")


def _cause(rank: int, end: Ending, vanished: bool, exit_: AgentExit | None = None) -> str:
    causes = [end.cause] if end.kind == "fault" else []
    if exit_ is not None:
        causes.append(exit_.cause)
    if vanished:
        causes.append("its series vanished")
    return ", ".join(causes)


def evidence(facts: Facts) -> dict[int, list[str]]:
    logs = facts.logs
    evidence = {r: _report_lines(logs[r]) or _own_words(logs[r]) for r in facts.reporting}
    for rank in [*facts.dead, *facts.why, *facts.awaited]:
        if logs[rank].read or rank in facts.dead:
            evidence[rank] = _own_words(logs[rank])
    for rank, exit_ in facts.exits.items():
        evidence.setdefault(rank, []).append(exit_.line)
    for rank, lines in evidence.items():
        dump = logs[rank].dump
        if dump and dump not in lines:
            lines.append(dump)  # where to look next: its Flight Recorder dump
    return evidence


def _report_lines(log: RankLog) -> list[str]:
    """A rank's distinct reports (a crash's what() repeats the timeout), a few."""
    seen, lines = set(), []
    for report in log.reports:
        key = (report.seq, report.op, report.last_enqueued, report.last_completed,
               report.timed_out)
        if key not in seen:
            seen.add(key)
            lines.append(report.line)
    return lines[:EVIDENCE_PER_RANK]


def evidence_lines(lines: list[str], fatal: str) -> list[str]:
    """Of a rank's lines, in order, those ``_own_words`` can pick, its fatal line being
    ``fatal``: the first and the last few notable lines, and the last few lines."""
    keep: set[int] = set()
    for index in range(len(lines) - 1, -1, -1):
        if len(keep) == EVIDENCE_PER_RANK:
            break
        if lines[index].strip():
            keep.add(index)
    notable: list[int] = []
    for index in _notable(lines):
        if (not notable or notable[-1] != index) and lines[index].rstrip("\r\n") != fatal:
            notable.append(index)
    keep.update(notable[:1], notable[-EVIDENCE_PER_RANK:])
    return [lines[index].rstrip("\r\n") for index in sorted(keep)]


def _notable(lines: list[str]) -> Iterator[int]:
    """The index of the line of each notable word, in order (one regex over all the lines)."""
    blob = "\n".join(lines)
    if blob.count("\n") != len(lines) - 1:  # a line holds a newline: find lines by offset
        ends = list(accumulate(len(line) + 1 for line in lines))
        yield from (bisect_right(ends, m.start()) for m in _NOTABLE_WORD.finditer(blob))
        return
    index, counted = 0, 0
    for match in _NOTABLE_WORD.finditer(blob):
        index += blob.count("\n", counted, match.start())
        counted = match.start()
        yield index


def _own_words(log: RankLog) -> list[str]:
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


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
