"""What hang triage gathers from one rank's log lines: its watchdog reports, where it first
timed out, where its Flight Recorder dump was written, and how its log ends
(``ranktop.tui.core.hang.triage`` turns that into a verdict)."""

from __future__ import annotations

from dataclasses import dataclass

from ..watchdog import (
    DUMP_WRITTEN,
    MARKERS,
    Ending,
    WatchdogReport,
    parse_report,
)

# A rank whose log shows NCCL starting again after a timeout has been restarted.
RESTART = "Init COMPLETE"
# The line ranktop puts between a torchrun attempt's lines and the next's
# (``ranktop.tui.logs.attempts``): what comes before it is the restarted process's.
NEW_ATTEMPT = "── ranktop: attempt_"
REPORTS_PER_RANK = 8  # the newest few: a hang makes each rank log only a handful


@dataclass(frozen=True)
class Work:
    """A collective: process group, SeqNum, operation."""

    pg: str
    seq: int | None
    op: str
    ranks: int  # how many reporting ranks timed out in it


class RankLog:
    """What triage gathered about one rank."""

    __slots__ = ("dump", "end", "first_timeout", "lines", "read", "reports")

    def __init__(self) -> None:
        self.read = False  # it had a non-blank line, before any restart cut
        self.lines: list[str] = []
        self.reports: list[WatchdogReport] = []
        self.first_timeout: int | None = None  # index in lines
        self.end = Ending("", "", "")
        self.dump = ""  # the line that says where its Flight Recorder dump was written

    def timed_out(self) -> bool:
        return any(r.timed_out for r in self.reports)

    def stuck(self) -> WatchdogReport | None:
        """The collective it first timed out in."""
        return next((r for r in self.reports if r.timed_out), None)

    def lowest(self, name: str, pg: str | None = None) -> int | None:
        values = [getattr(r, name) for r in self.reports
                  if getattr(r, name) is not None and (pg is None or same_pg(r.pg, pg))]
        return min(values) if values else None


def same_pg(a: str, b: str) -> bool:
    return not a or not b or a == b  # a line that names no group may be any


def scan(rank: int, lines: list[str], logs: dict[int, RankLog]) -> None:
    """Parse one rank's lines, looking closely only at the few that can matter."""
    own = logs[rank]
    own.read = own.read or any(line.strip() for line in lines)
    blob = "\n".join(lines)
    restart = max(blob.rfind(RESTART), blob.rfind(NEW_ATTEMPT))
    if restart >= 0:
        lines = lines[blob.count("\n", 0, restart) + 1:]
    own.lines = lines
    if "Flight Recorder debug info" in blob:
        own.dump = next((line.rstrip("\r\n") for line in reversed(lines)
                         if DUMP_WRITTEN.search(line)), own.dump)
    if not any(marker in blob for marker in MARKERS):
        return
    found: list[WatchdogReport] = []
    work, progress, wait = MARKERS
    for index, line in enumerate(lines):
        if work not in line and progress not in line and wait not in line:
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
