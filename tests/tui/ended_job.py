"""The demo as a backend holds a job whose series ended: after ``end`` a poll finds no
series of the job (as Prometheus answers once a job's targets are gone), while its past up
to ``end`` is still there; ``back`` makes it answer again (a new attempt)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ranktop.tui.core.model import Frame, Health, RankMap, SourceStatus
from ranktop.tui.sources.base import Source
from ranktop.tui.sources.demo import DemoSource


class EndedJob(Source):
    """``demo`` until ``end`` (epoch seconds; None: it never ends)."""

    keeps_past = True

    def __init__(self, demo: DemoSource, end: float | None = None) -> None:
        self.demo = demo
        self.end = end
        self.back = False  # the job answers again
        self.name, self.job_name = demo.name, demo.job_name
        self._status = demo.status()

    @property
    def rank_map(self) -> RankMap:
        return self.demo.rank_map

    @property
    def gone(self) -> bool:
        return self.end is not None and not self.back and self.demo.clock() > self.end

    async def poll(self) -> Frame:
        if not self.gone:
            frame = await self.demo.poll()
            self._status = self.demo.status()
            return frame
        now = self.demo.clock()
        self._status = SourceStatus(self.name, Health.ERROR, since=now, last_ok=now,
                                    message=f"no series for job {self.job_name!r}")
        return Frame(time=now, values={})

    def status(self) -> SourceStatus:
        return self._status

    def series_end(self) -> float | None:
        return self.end if self.gone else None

    def frames_at(self, times: Sequence[float]) -> Iterator[tuple[Frame, RankMap]]:
        kept = [t for t in times if self.end is None or self.back or t <= self.end]
        return self.demo.frames_at(kept)

    def lookback(self, job_values, seconds, step, until=None):
        return self.demo.lookback(job_values, seconds, step, until)

    def job_past(self, job_values, seconds, step, until):
        return self.demo.job_past(job_values, seconds, step, until)
