"""What ranktop could not read of the ranks' logs, said as such: the absence of a log is no
fact about the job. Hang triage's reader fills it in (``ranktop.tui.logs.triage_worker``);
the verdict's summary and the evidence screen say it."""

from __future__ import annotations

from dataclasses import dataclass

NAMED_RANKS = 5


@dataclass(frozen=True)
class LogGaps:
    """No log configured at all, or the ranks for which the spec found no file."""

    configured: bool = True
    spec: str = ""
    no_file: tuple[int, ...] = ()  # ranks, in order

    def __bool__(self) -> bool:
        return not self.configured or bool(self.no_file)

    def note(self) -> str:
        """One clause for the verdict's summary; "" when nothing is missing."""
        if not self.configured:
            return "no log configured (--logs PATTERN): no rank's log was read"
        if not self.no_file:
            return ""
        count = len(self.no_file)
        shown = ", ".join(map(str, self.no_file[:NAMED_RANKS]))
        more = ", ..." if count > NAMED_RANKS else ""
        noun = "rank" if count == 1 else "ranks"
        return (f"no file matched for {count} {noun} ({noun} {shown}{more}): check the "
                f"pattern with `{self.check_command()}`")

    def check_command(self) -> str:
        return f"ranktop check-config --logs '{self.spec}'"

    def of_rank(self, rank: int) -> str:
        """Why a rank shows no log lines, in parentheses."""
        if not self.configured:
            return "(no log configured: --logs PATTERN)"
        if rank in self.no_file:
            return (f"(no log file found for this rank: check the pattern with "
                    f"`{self.check_command()}`)")
        return NO_LINES_READ


NO_LINES_READ = "(no lines read from this rank's log)"
