"""The hang evidence screen's Flight Recorder section: what the ranks' dumps say.

Every string in a dump came from outside (group names, call sites, file names): each is
made safe with ``plain`` and appended to ``rich.text.Text`` as text, never as markup.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from ..core.hang.flight_triage import FlightVerdict
from ..core.moment import shown
from ..core.text import plain
from .line_styles import Styles

SHOWN_RANKS = 8
SHOWN_LINES = 4  # of each list (groups downstream, unreadable dumps, notes)
NAMED = 20

KINDS = {
    "missing": "never joined the collective the others wait in",
    "mismatch": "joined it with another operation, sizes or dtypes",
    "state": "never started it on the GPU",
    "no_dump": "wrote no dump while the other members wait in, or stopped at, one collective",
    "landing": "too many dumps not read yet to blame anyone (still landing?)",
    "all_stuck": "no rank stands out",
    "clear": "no collective pending",
}


def flight_text(verdict: FlightVerdict, label: Callable[[int], str], style: Styles) -> Text:
    """The dumps' verdict and evidence, ranks named by ``label``."""
    text = Text()
    text.append("Flight Recorder dumps\n", style("strong"))
    text.append(f"{plain(verdict.summary, 600)}\n")
    rows = [("verdict", KINDS.get(verdict.kind, verdict.kind)),
            ("culprits", _ranks(verdict.culprits) or "none named"),
            ("group", f"{verdict.group} ({verdict.group_size} ranks)" if verdict.group else ""),
            ("collective", f"{verdict.op} SeqNum {verdict.seq}" if verdict.op else ""),
            ("sizes", verdict.sizes),
            ("culprit at", verdict.call_site),
            ("others at", verdict.waiting_call_site),
            ("no dump", _ranks(verdict.missing_dumps)),
            ("written", _when(verdict.written)),
            ("downstream", _some(verdict.downstream))]
    for name, value in rows:
        if value:
            text.append(f"  {name:<11}", style("muted"))
            text.append(f"{plain(value, 300)}\n")
    unreadable = sorted(verdict.unreadable.items())
    for rank, why in unreadable[:SHOWN_LINES]:
        text.append("  unreadable ", style("muted"))
        text.append(f"rank {rank}: {plain(why, 300)}\n")
    _more(text, len(unreadable), SHOWN_LINES, "unreadable dumps", style)
    for note in verdict.notes[:SHOWN_LINES]:
        text.append(f"  note       {plain(note, 300)}\n", style("muted"))
    _more(text, len(verdict.notes), SHOWN_LINES, "notes", style)
    ranks = [*verdict.culprits, *(r for r in verdict.evidence if r not in verdict.culprits)]
    with_evidence = [r for r in ranks if r in verdict.evidence]
    for rank in with_evidence[:SHOWN_RANKS]:
        blamed = rank in verdict.culprits
        text.append(f"{label(rank)}{'  (culprit)' if blamed else ''}\n",
                    style("hang" if blamed else "strong"))
        for line in verdict.evidence[rank]:
            text.append(f"  {plain(line, 400)}\n", style("quoted"))
    _more(text, len(with_evidence), SHOWN_RANKS, "ranks with evidence", style)
    return text


def _some(items: tuple[str, ...] | list[str]) -> str:
    """The first few, and how many more."""
    listed = "; ".join(items[:SHOWN_LINES])
    return listed + (f"; … and {len(items) - SHOWN_LINES} more" if len(items) > SHOWN_LINES else "")


def _more(text: Text, total: int, limit: int, what: str, style: Styles) -> None:
    if total > limit:
        text.append(f"  … and {total - limit} more {what}\n", style("muted"))


def _when(written: tuple[float, float] | None) -> str:
    if written is None:
        return ""
    first, last = (shown(t) for t in written)
    return first if first == last else f"{first} to {last}"


def _ranks(ranks: tuple[int, ...]) -> str:
    named = ", ".join(map(str, ranks[:NAMED]))
    return named + (f", ... (+{len(ranks) - NAMED})" if len(ranks) > NAMED else "")
