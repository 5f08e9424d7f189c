"""Whether the job's series have ended: a live poll in which no rank answers, while the
backend holds the job's step series until a while ago.

Paged after the job died, a console or report would otherwise say only that nothing can be
judged. Told when the series ended, it shows the last moment the backend holds before the
end, replayed as any past moment is (``replay.Replay.at``), and says so. Asked of the
source only after a poll without a live rank: one query (``Source.series_end``)."""

from __future__ import annotations

from ranktop.tui.core.analysis import Analysis
from ranktop.tui.core.model import Health
from ranktop.tui.core.moment import JobEnd
from ranktop.tui.sources.base import Source


def job_end(source: Source, analysis: Analysis, now: float) -> JobEnd | None:
    """When the job's series ended, as of the poll behind ``analysis`` (``now`` where it
    gave no frame), if that poll found no rank up and the backend's newest step sample lies
    before it; None otherwise, or when the source cannot say (a failed query is no
    evidence of an end)."""
    if not source.keeps_past or not _nothing_live(analysis):
        return None
    try:
        newest = source.series_end()
    except Exception:
        return None
    frame = analysis.frame
    polled = frame.time if frame is not None else now
    if newest is None or newest >= polled:
        return None
    return JobEnd(newest, polled)


def _nothing_live(analysis: Analysis) -> bool:
    """The poll found no rank up, or no series of the job at all, or only stale ones."""
    if analysis.frame is None or analysis.ranks_up == 0:
        return True
    return analysis.status.health in (Health.ERROR, Health.STALE)
