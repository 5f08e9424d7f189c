"""Whether the job's series have ended: a live poll in which no rank answers, while the
backend holds the job's step series until a while ago.

Paged after the job died, a console or report would otherwise say only that nothing can be
judged. Told when the series ended, it shows the last moment the backend holds before the
end, replayed as any past moment is (``replay.Replay.at``), and says so. The source is
asked (``Source.series_end``: one query, a few where the end lies further back than a
quarter of an hour) after a poll without a live rank; once the end is known it is kept
while no rank answers, and a look that found none is not asked again for
``RECHECK_SECONDS``."""

from __future__ import annotations

from dataclasses import replace

from ..core.analysis import Analysis
from ..core.model import Health
from ..core.moment import JobEnd
from ..sources.base import Source

RECHECK_SECONDS = 60.0


class EndWatch:
    """When ``source``'s job's series ended, as each poll finds."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.ended: JobEnd | None = None
        self._looked = float("-inf")  # when a look last found no end

    def after(self, analysis: Analysis, now: float) -> JobEnd | None:
        """The end, as of the poll behind ``analysis`` (``now`` where it gave no frame):
        None while a rank answers, and where the source cannot say (a failed query is no
        evidence of an end)."""
        if not self.source.keeps_past or not _nothing_live(analysis):
            self.ended, self._looked = None, float("-inf")
            return None
        frame = analysis.frame
        polled = frame.time if frame is not None else now
        if self.ended is not None:
            self.ended = replace(self.ended, seen=polled)
        elif polled - self._looked >= RECHECK_SECONDS:
            self.ended = _looked_up(self.source, polled)
            self._looked = polled if self.ended is None else float("-inf")
        return self.ended


def _looked_up(source: Source, polled: float) -> JobEnd | None:
    try:
        newest = source.series_end()
    except Exception:
        return None
    return JobEnd(newest, polled) if newest is not None and newest < polled else None


def _nothing_live(analysis: Analysis) -> bool:
    """The poll found no rank up, or no series of the job at all, or only stale ones; a
    partial answer says nothing of the ranks it left out (their store may hold them live)."""
    if analysis.status.partial:
        return False
    if analysis.frame is None or analysis.ranks_up == 0:
        return True
    return analysis.status.health in (Health.ERROR, Health.STALE)
