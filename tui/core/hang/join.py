"""One hang verdict from both witnesses: the ranks' watchdog lines (``hang.triage``) and their
Flight Recorder dumps (``flight_triage.analyse_dumps``).

The dumps say more (the group, the collective, the call site) and land before most logs
are read, but a dead rank writes none; the logs see a rank die. So:

- only one speaks: its verdict, with the dumps' verdict attached;
- the logs name no culprit (not sure yet, or no rank stands out in them) and the dumps do:
  the dumps' culprits, with what the logs say alongside;
- both name culprits and agree (the dumps' culprits are among the logs'): the logs' verdict,
  the dumps' evidence added;
- both name culprits and disagree: both are kept, the logs' first, and ``disagreement``
  says who blames whom. Neither is dropped silently.
"""

from __future__ import annotations

from dataclasses import replace

from ..text import ranks_named
from .flight_triage import FlightVerdict
from .triage import HangVerdict

__all__ = ["join_verdicts"]


def join_verdicts(logs: HangVerdict | None, dumps: FlightVerdict | None) -> HangVerdict | None:
    """The hang verdict with all its evidence; None when neither shows a hang."""
    if dumps is None or (dumps.kind == "clear" and logs is None):
        return logs
    if logs is None:
        return _from_dumps(dumps)
    if dumps.kind == "clear" or not dumps.culprits:
        return replace(logs, flight=dumps)
    said = f"Flight Recorder: {dumps.summary}"
    if not logs.sure or not logs.behind:
        return replace(logs, behind=list(dumps.culprits), sure=True, awaiting="",
                       summary=f"{said} (the logs alone: {logs.summary})", flight=dumps)
    blamed = set(logs.behind)
    if set(dumps.culprits) <= blamed:
        return replace(logs, summary=f"{logs.summary}; the Flight Recorder agrees: "
                       f"{dumps.summary}", flight=dumps)
    others = [r for r in dumps.culprits if r not in blamed]
    disagreement = (f"the logs blame {ranks_named(logs.behind)}; the Flight Recorder dumps blame"
                    f" {ranks_named(list(dumps.culprits))}")
    return replace(logs, behind=[*logs.behind, *others], flight=dumps,
                   disagreement=disagreement,
                   summary=f"{logs.summary}; but {disagreement}: {dumps.summary}")


def _from_dumps(dumps: FlightVerdict) -> HangVerdict:
    """A verdict from the dumps alone (no watchdog line read yet, or no logs configured)."""
    return HangVerdict(
        reporting=list(dumps.waiting), silent=[], behind=list(dumps.culprits),
        last_completed={}, evidence={}, summary=f"Flight Recorder: {dumps.summary}",
        sure=dumps.kind != "landing", flight=dumps)
