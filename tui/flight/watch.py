"""The ranks' Flight Recorder dumps as the hang triage reads them, poll after poll.

``FlightDumps(pattern).verdict(world_size, since)`` judges the dumps that landed since the
job stopped (``read_dumps``, each file parsed once until it changes, then
``analyse_dumps``). The reading runs in a thread of its own: a call starts a read when none
is running and waits for it at most ``wait_seconds``, so a small read (the usual case:
files already parsed) answers at once, while a large one (512 dumps of 2,000 entries, cold)
never holds up the poll that asked; the poll after it gets the verdict. Where some dumps are
slow to parse (hostile?), the verdict of the readable ones is given while they are read
(``timed_parse``). A verdict read for another ``since`` (another hang) is never given.
"""

from __future__ import annotations

import threading

from ..core.hang.flight import DumpSet
from ..core.hang.flight_triage import FlightVerdict, analyse_dumps
from .dump_paths import PatternError
from .reader import BUDGET, Cache, ReadBudget, read_dumps

WAIT_SECONDS = 1.0
# Dump files are dated by the clock of the machine that stores them, not ranktop's: a dump
# dated this much before the stall still counts (a watchdog dumps minutes after it).
CLOCK_SKEW_SECONDS = 15.0
EARLIER_KEPT = 100_000  # files of earlier hangs remembered (a few hangs of a large job)
_Key = tuple[int, float | None, float | None]  # world size, since, until


class FlightDumps:
    """Where the dumps are, what reading them may cost, and what was read before."""

    def __init__(self, pattern: str, budget: ReadBudget = BUDGET,
                 wait_seconds: float = WAIT_SECONDS) -> None:
        self.pattern = pattern
        self.budget = budget
        self.wait_seconds = wait_seconds
        self.cache: Cache = {}  # touched only by the reading thread
        # Files read during an earlier hang, unchanged since: never this hang's evidence,
        # however close their dates (clock skew is allowed for) come to its start.
        self._earlier: set[tuple[str, int, int]] = set()
        self._read_since: float | None = None  # the ``since`` of the last read
        self._lock = threading.Lock()
        self._reading: threading.Thread | None = None
        self._last: tuple[_Key, FlightVerdict | None] | None = None

    def verdict(self, world_size: int, since: float | None = None,
                until: float | None = None) -> FlightVerdict | None:
        """What the dumps written since ``since`` (and, for a past moment, by ``until``)
        say, as of the newest finished read; None when none was read (yet)."""
        key = (world_size, since, until)
        with self._lock:
            if self._reading is None or not self._reading.is_alive():
                self._reading = threading.Thread(target=self._read, args=(key,),
                                                 name="ranktop-flight-dumps", daemon=True)
                self._reading.start()
            reading = self._reading
        reading.join(self.wait_seconds)
        with self._lock:
            last = self._last
        return last[1] if last is not None and last[0] == key else None

    def _read(self, key: _Key) -> None:
        world_size, since, until = key
        if since is not None and since != self._read_since:  # another start than last read's
            self._remember_earlier(since)
        self._read_since = since
        try:
            oldest = None if since is None else since - CLOCK_SKEW_SECONDS
            dumps = read_dumps(self.pattern, world_size, self.budget, cache=self.cache,
                               since=oldest, earlier=self._earlier, until=until,
                               readable=lambda read: self._judged(key, read))
            found = analyse_dumps(dumps)
        except PatternError:  # checked with the configuration: cannot happen there
            found = None
        with self._lock:
            self._last = (key, found)

    def _judged(self, key: _Key, readable: DumpSet) -> None:
        """The verdict of the dumps read so far, given while the slow ones are read."""
        found = analyse_dumps(readable)
        with self._lock:
            self._last = (key, found)

    def _remember_earlier(self, since: float) -> None:
        """The files read so far that were written before the hang that began at ``since``:
        an earlier hang's, even where the clock skew allowed for would admit them. A file
        written since then is this hang's, whatever start the reads before assumed: a
        console started late judges a first stretch without the start (``since`` None),
        then a longer one that sees it."""
        before = {key for key in self.cache if key[2] < since * 1e9}
        self._earlier = before if len(self._earlier) > EARLIER_KEPT else self._earlier | before
