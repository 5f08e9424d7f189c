"""Hang triage: which rank the others wait for, read from PyTorch's NCCL watchdog lines.

When a synchronous job hangs, every rank still alive eventually logs a watchdog timeout
for the collective it is stuck in, with that collective's sequence number and (since
PyTorch ~2.3) its last enqueued and last completed work. The rank the others wait for
usually logs nothing of the kind: it is dead, stuck outside NCCL, or one collective behind.
``triage`` turns every rank's log tail into that verdict, with the lines that support it.

The lines handled, by vintage (any launcher prefix before them is ignored)::

    [E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout:
        WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800042 ...
    [rank3]:[E1122 03:04:05.123456789 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught ...
        WorkNCCL(SeqNum=8812, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, ...)
    [PG ID 0 PG GUID 0(default_pg) Rank 3] Timeout at NCCL work: 8812, last enqueued NCCL
        work: 8812, last completed NCCL work: 8811.
    [PG ID 2 PG GUID 3 Rank 3] Exception (either an error or timeout) detected by watchdog
        at work: 32, last enqueued NCCL work: 32, last completed NCCL work: 31.
    [PG ID 0 PG GUID 0(default_pg) Rank 4] Received a dump signal due to a collective
        timeout from rank 7 ... Last enqueued NCCL work: 56118, last completed NCCL work: 56118.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_WORK = re.compile(r"WorkNCCL\((?P<body>.*?Timeout\(ms\)=(?P<timeout>\d+))\)")
_SEQ = re.compile(r"SeqNum=(\d+)")
_OP = re.compile(r"OpType=(\w+)")
_RAN = re.compile(r" ran for (\d+) milliseconds")
_TIMED_OUT = re.compile(r"collective operation timeout: WorkNCCL|\) timed out in blocking wait")
_PROGRESS = re.compile(
    r"(?:(?P<kind>Timeout at NCCL work|detected by watchdog at work): (?P<seq>-?\d+), l"
    r"|Received a dump signal.*?L)"
    r"ast enqueued NCCL work: (?P<enq>-?\d+), last completed NCCL work: (?P<done>-?\d+)"
)
_LOG_PREFIX = re.compile(r"\[(?:PG [^\]]*? )?Rank (\d+)\]")
_GLOBAL_PREFIX = re.compile(r"\[rank(\d+)\]:")
# Substrings every line above contains: a cheap scan before any regex runs.
_MARKERS = ("WorkNCCL(", "NCCL work: ")
# A rank whose log shows NCCL starting again after a timeout has been restarted.
_RESTART = "Init COMPLETE"
_NOTABLE = ("WARN", "rror", "ailure", "xception", "terminate", "Xid", "Traceback")
EVIDENCE_PER_RANK = 3
REPORTS_PER_RANK = 8  # the newest few: a hang makes each rank log only a handful
NAMED_IN_SUMMARY = 5


@dataclass(frozen=True)
class WatchdogReport:
    """What one watchdog line says; fields a line's vintage lacks are None (``op`` "")."""

    rank: int  # the rank the line names, -1 when it names none
    seq: int | None
    op: str
    timeout_ms: int | None
    ran_ms: int | None
    last_enqueued: int | None
    last_completed: int | None
    line: str

    @property
    def timed_out(self) -> bool:
        """False for a dump signal received from another rank that timed out."""
        return self.seq is not None or self.timeout_ms is not None


@dataclass(frozen=True)
class HangVerdict:
    """Who timed out, who did not, and who the others are waiting for."""

    reporting: list[int]  # ranks that logged a watchdog timeout
    silent: list[int]  # ranks of the job that logged none
    behind: list[int]  # the rank(s) the others are waiting for
    last_completed: dict[int, int]  # per rank that logged it
    evidence: dict[int, list[str]]  # per rank: the lines behind the verdict, a few each
    summary: str  # one line for the screen


def parse_watchdog(line: str) -> WatchdogReport | None:
    """The watchdog timeout a log line reports, or None if it reports none."""
    parsed = _parse(line)
    return parsed[0] if parsed else None


def _parse(line: str) -> tuple[WatchdogReport, bool] | None:
    """The report and whether its rank is the global one (PyTorch's ``[rankN]:`` prefix)."""
    if "WorkNCCL(" in line and _TIMED_OUT.search(line):
        report = _parse_work(line)
    elif "NCCL work: " in line:
        report = _parse_progress(line)
    else:
        return None
    if report is None:
        return None
    prefix = _GLOBAL_PREFIX.search(line)
    if prefix:
        return _with_rank(report, int(prefix.group(1))), True
    named = _LOG_PREFIX.search(line)
    return _with_rank(report, int(named.group(1)) if named else -1), False


def _with_rank(report: WatchdogReport, rank: int) -> WatchdogReport:
    return WatchdogReport(rank, report.seq, report.op, report.timeout_ms, report.ran_ms,
                          report.last_enqueued, report.last_completed, report.line)


def _parse_work(line: str) -> WatchdogReport | None:
    work = _WORK.search(line)
    if work is None:
        return None
    body = work.group("body")
    seq, op, ran = _SEQ.search(body), _OP.search(body), _RAN.search(line, work.end())
    return WatchdogReport(
        rank=-1, seq=int(seq.group(1)) if seq else None, op=op.group(1) if op else "",
        timeout_ms=int(work.group("timeout")), ran_ms=int(ran.group(1)) if ran else None,
        last_enqueued=None, last_completed=None, line=line.rstrip("\r\n"),
    )


def _parse_progress(line: str) -> WatchdogReport | None:
    progress = _PROGRESS.search(line)
    if progress is None:
        return None
    seq = progress.group("seq")
    return WatchdogReport(
        rank=-1, seq=int(seq) if seq is not None else None, op="", timeout_ms=None,
        ran_ms=None, last_enqueued=int(progress.group("enq")),
        last_completed=int(progress.group("done")), line=line.rstrip("\r\n"),
    )


class _RankLog:
    """What triage gathered about one rank."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.reports: list[WatchdogReport] = []

    def timed_out(self) -> bool:
        return any(r.timed_out for r in self.reports)

    def op(self) -> str:
        return next((r.op for r in self.reports if r.op), "")

    def lowest(self, field: str) -> int | None:
        values = [getattr(r, field) for r in self.reports if getattr(r, field) is not None]
        return min(values) if values else None


def triage(lines_by_rank: Mapping[int, Iterable[str]], world_size: int) -> HangVerdict | None:
    """The hang verdict from each rank's log lines; None when no rank reported a timeout.

    A line counts for the rank it was read for, unless PyTorch's ``[rankN]:`` prefix names
    another rank of the job (a merged log). Lines before a rank's last NCCL init are from
    before a restart and are ignored. Ranks outside ``range(world_size)`` are ignored.
    """
    logs = {rank: _RankLog() for rank in range(world_size)}
    read = set()
    for rank, lines in lines_by_rank.items():
        if 0 <= rank < world_size:
            read.add(rank)
            _scan(rank, list(lines), logs)
    reporting = [rank for rank, log in logs.items() if log.timed_out()]
    if not reporting:
        return None
    silent = [rank for rank in range(world_size) if not logs[rank].timed_out()]
    silent_read = [rank for rank in silent if rank in read]
    behind = silent_read or silent or _lowest_progress(reporting, logs)
    last_completed = {
        rank: value for rank, log in logs.items()
        if (value := log.lowest("last_completed")) is not None
    }
    evidence = {rank: [r.line for r in logs[rank].reports[:EVIDENCE_PER_RANK]]
                for rank in reporting}
    for rank in behind:
        evidence[rank] = _evidence(logs[rank])
    summary = _summary(reporting, silent, silent_read, behind, logs, world_size - len(read))
    return HangVerdict(reporting, silent, behind, last_completed, evidence, summary)


def _scan(rank: int, lines: list[str], logs: dict[int, _RankLog]) -> None:
    """Parse one rank's lines, looking closely only at the few that can matter."""
    blob = "\n".join(lines)
    own = logs[rank]
    restart = blob.rfind(_RESTART)
    if restart >= 0:
        newline = blob.find("\n", restart)
        blob = blob[newline + 1:] if newline >= 0 else ""
        lines = blob.split("\n") if blob else []
    own.lines = lines
    parsed = [p for line in _marked_lines(blob, REPORTS_PER_RANK) if (p := _parse(line))]
    if any(is_global and report.rank != rank for report, is_global in parsed):
        # A merged log (srun -l, a tee'd console): every rank's lines are in it.
        limit = REPORTS_PER_RANK * len(logs)
        parsed = [p for line in _marked_lines(blob, limit) if (p := _parse(line))]
    for report, is_global in parsed:
        target = own
        if is_global and report.rank != rank and report.rank in logs:
            target = logs[report.rank]
        target.reports.append(report)


def _marked_lines(blob: str, limit: int) -> list[str]:
    """The last ``limit`` lines of ``blob`` holding a marker, oldest first (str.rfind is fast)."""
    found: list[str] = []
    end = len(blob)
    while len(found) < limit:
        at = max(blob.rfind(marker, 0, end) for marker in _MARKERS)
        if at < 0:
            break
        start = blob.rfind("\n", 0, at) + 1
        stop = blob.find("\n", at)
        found.append(blob[start:stop if stop >= 0 else len(blob)])
        end = max(start - 1, 0)
    return found[::-1]


def _lowest_progress(reporting: list[int], logs: dict[int, _RankLog]) -> list[int]:
    """Ranks that got less far than the others, or none when all stopped at the same work."""
    for field in ("last_completed", "last_enqueued", "seq"):
        progress = {r: v for r in reporting if (v := logs[r].lowest(field)) is not None}
        if len(set(progress.values())) > 1:
            low = min(progress.values())
            return sorted(r for r, v in progress.items() if v == low)
    return []


def _evidence(log: _RankLog) -> list[str]:
    """A behind rank's own words: its watchdog lines, else its errors, else its last lines."""
    if log.reports:
        return [r.line for r in log.reports[:EVIDENCE_PER_RANK]]
    lines = [line.rstrip("\r\n") for line in log.lines if line.strip()]
    notable = [line for line in lines if any(word in line for word in _NOTABLE)]
    if len(notable) > EVIDENCE_PER_RANK:  # the first error is often the cause, the last the end
        return [notable[0], *notable[1 - EVIDENCE_PER_RANK:]]
    return (notable or lines)[-EVIDENCE_PER_RANK:]


def _summary(reporting: list[int], silent: list[int], silent_read: list[int],
             behind: list[int], logs: dict[int, _RankLog], unread: int) -> str:
    text = f"{_count(len(reporting), 'rank')} timed out{_stuck_in(reporting, logs)}"
    if silent_read:
        them = "it" if len(silent_read) == 1 else "them"
        text += f"; {_ranks(silent_read)} logged nothing: the others are waiting for {them}"
    elif silent:
        text += (f"; no log read for {_count(len(silent), 'rank')} ({_ranks(silent, False)}):"
                 " the one the others wait for is likely among them")
    elif behind:
        done = {logs[r].lowest("last_completed") for r in behind}
        got = f" (last completed {done.pop()})" if len(done) == 1 and None not in done else ""
        verb = "is" if len(behind) == 1 else "are"
        text += f"; {_ranks(behind)} {verb} behind{got}: the others are waiting"
    else:
        text += "; all stopped at the same work: no one rank stands out (network or NCCL?)"
    if unread and not silent:
        text += f"; no log read for {_count(unread, 'rank')}"
    return text


def _stuck_in(reporting: list[int], logs: dict[int, _RankLog]) -> str:
    works = Counter((logs[rank].op(), logs[rank].lowest("seq")) for rank in reporting)
    (op, seq), count = works.most_common(1)[0]
    parts = [part for part in (op, "" if seq is None else f"SeqNum {seq}") if part]
    if not parts:
        return ""
    where = " in " + " ".join(parts)
    return where if count == len(reporting) else f"{where} ({count} of them)"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _ranks(ranks: list[int], with_noun: bool = True) -> str:
    shown = ", ".join(str(r) for r in ranks[:NAMED_IN_SUMMARY])
    more = f", ... (+{len(ranks) - NAMED_IN_SUMMARY})" if len(ranks) > NAMED_IN_SUMMARY else ""
    if not with_noun:
        return shown + more
    return f"{'rank' if len(ranks) == 1 else 'ranks'} {shown}{more}"
