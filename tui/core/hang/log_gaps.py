"""What ranktop could not read of the ranks' logs, said as such: the absence of a log is no
fact about the job. Hang triage's reader fills it in (``ranktop.tui.logs.triage_worker``);
the verdict's summary and the evidence screen say it."""

from __future__ import annotations

from dataclasses import dataclass

NAMED_RANKS = 5


@dataclass(frozen=True)
class LogGaps:
    """No log configured at all, the ranks for which the spec found no file, and, for a
    past moment, the ranks whose lines read all come after it (the file was rotated or
    written anew since: the lines of then are no longer on disk)."""

    configured: bool = True
    spec: str = ""
    no_file: tuple[int, ...] = ()  # ranks, in order
    after_moment: tuple[int, ...] = ()  # ranks, in order

    def __bool__(self) -> bool:
        return not self.configured or bool(self.no_file) or bool(self.after_moment)

    def note(self) -> str:
        """One clause for the verdict's summary; "" when nothing is missing."""
        if not self.configured:
            return "no log configured (--logs PATTERN): no rank's log was read"
        notes = []
        if self.no_file:
            noun, ranks = _ranks(self.no_file)
            notes.append(f"no file matched for {len(self.no_file)} {noun} ({ranks}): check "
                         f"the pattern with `{self.check_command()}`")
        if self.after_moment:
            noun, ranks = _ranks(self.after_moment)
            notes.append(f"the log of {len(self.after_moment)} {noun} ({ranks}) begins after "
                         f"this moment: {AFTER_MOMENT}")
        return "; ".join(notes)

    def check_command(self) -> str:
        return f"ranktop check-config --logs '{self.spec}'"

    def of_rank(self, rank: int) -> str:
        """Why a rank shows no log lines, in parentheses."""
        if not self.configured:
            return "(no log configured: --logs PATTERN)"
        if rank in self.after_moment:
            return f"(this rank's log begins after this moment: {AFTER_MOMENT})"
        if rank in self.no_file:
            return (f"(no log file found for this rank: check the pattern with "
                    f"`{self.check_command()}`)")
        return NO_LINES_READ


NO_LINES_READ = "(no lines read from this rank's log)"
AFTER_MOMENT = ("its lines of then are no longer on disk (rotated, or written anew since), "
                "or lie before the tail read")


def _ranks(ranks: tuple[int, ...]) -> tuple[str, str]:
    """("ranks", "ranks 1, 2, 3, ...") for a note."""
    noun = "rank" if len(ranks) == 1 else "ranks"
    more = ", ..." if len(ranks) > NAMED_RANKS else ""
    return noun, f"{noun} {', '.join(map(str, ranks[:NAMED_RANKS]))}{more}"
