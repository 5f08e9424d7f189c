"""The ranks' Flight Recorder dumps as the hang triage reads them, poll after poll.

``FlightDumps(pattern).verdict(world_size, since)`` reads the dumps that landed since the
job stopped (``read_dumps``; each file parsed once, until it changes) and judges them
(``analyse_dumps``). It blocks on the file system: call it from the triage's worker thread,
never from the UI's; one call at a time.
"""

from __future__ import annotations

from ranktop.tui.core.flight_triage import FlightVerdict, analyse_dumps
from ranktop.tui.flight.dump_paths import PatternError
from ranktop.tui.flight.reader import BUDGET, Cache, ReadBudget, read_dumps


class FlightDumps:
    """Where the dumps are, what reading them may cost, and what was read before."""

    def __init__(self, pattern: str, budget: ReadBudget = BUDGET) -> None:
        self.pattern = pattern
        self.budget = budget
        self.cache: Cache = {}

    def verdict(self, world_size: int, since: float | None = None) -> FlightVerdict | None:
        """What the dumps written since ``since`` say; None when none was read."""
        try:
            dumps = read_dumps(self.pattern, world_size, self.budget, cache=self.cache,
                               since=since)
        except PatternError:  # checked with the configuration: cannot happen there
            return None
        return analyse_dumps(dumps)
