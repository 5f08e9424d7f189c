"""The one small interface every data source offers the engine, and its capabilities.

Beyond ``poll`` and ``status``, a source may be able to do more: say how long its server
asked to be left alone, give a rank's history from before the console started, the job's
past values for a late start, the frames of any past moment, a GPU's model, where the
demo's logs are, who else runs on a node. Each capability is declared here with a neutral
default (nothing to wait for, no history, no model...), so the engine asks every source
the same way and a source that combines others (``MergedSource``) forwards each to the part
that has it: nothing is probed for, nothing silently lost."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..core.advice.tenants import NodeTenants
from ..core.detect.lookback import Lookback
from ..core.history import Point
from ..core.model import Frame, Rank, RankMap, SourceStatus


class Source:
    """A source of frames. ``poll`` never blocks the event loop: blocking work runs in a
    thread. It raises on failure; ``status`` then says what went wrong and since when."""

    name: str
    job_name: str
    rank_map: RankMap
    retry_after: float | None = None
    """Seconds the server last asked to be left alone (HTTP Retry-After); None: no wait."""
    log_spec: str = ""
    """Where the ranks' logs are, when the source itself knows (the demo writes them)."""
    flight_spec: str = ""
    """Where the ranks' Flight Recorder dumps are, when the source itself knows."""
    keeps_past: bool = False
    """Whether ``frames_at`` can give past moments (a backend with history, the demo)."""

    async def poll(self) -> Frame:
        raise NotImplementedError

    def status(self) -> SourceStatus:
        raise NotImplementedError

    def backfill(self, rank: int, metrics: Sequence[str], seconds: float, step: float,
                 ) -> dict[str, list[Point]]:
        """``rank``'s values of ``metrics`` over the last ``seconds`` (none: {})."""
        return {}

    def lookback(self, job_values: Sequence[str], seconds: float, step: float,
                 until: float | None = None) -> Lookback | None:
        """The job's values over the ``seconds`` before ``until`` (None: now), and the ranks
        seen then (None: the source keeps no past)."""
        return None

    def job_past(self, job_values: Sequence[str], seconds: float, step: float, until: float
                 ) -> dict[str, list[tuple[float, float]]] | None:
        """``lookback``'s job values alone, without the ranks seen (None: the source keeps
        no past)."""
        found = self.lookback(job_values, seconds, step, until)
        return None if found is None else {k: list(v) for k, v in found.job.items()}

    def series_end(self) -> float | None:
        """When the job's step series last had a sample, looking back ``SEEN_SECONDS``
        from now (epoch seconds; None: none then, or a source that keeps no past).
        Blocking; raises as ``poll`` does."""
        return None

    def frames_at(self, times: Sequence[float]) -> Iterator[tuple[Frame, RankMap]]:
        """The frame a poll would have given at each of ``times`` (epoch seconds, oldest
        first), each with the rank map it was read through: from the backend's own
        history, never from a recording. Blocking; raises as ``poll`` does. A source that
        does not ``keeps_past`` gives none."""
        return iter(())

    def past_said(self) -> tuple[str, ...]:
        """What the past's answers gave cause to doubt since this was last asked (samples
        twice or out of order: read moment by moment instead), to say with the moment."""
        return ()

    def forget_past(self) -> None:
        """Let go of what was kept of the past's answers (a late start's catch-up has read
        the minutes it needed, and will not read them again)."""

    def queries(self) -> dict[str, str]:
        """Every query of a poll, by what it is for ({}: a source that asks none)."""
        return {}

    def gpu_model(self, rank: int) -> str:
        """The model of ``rank``'s GPU, "" when the source does not know it."""
        return ""

    def tenants(self, nodes: Sequence[str]) -> dict[str, NodeTenants]:
        """Who else has GPUs on each of ``nodes`` (``core.advice.tenants``), by node; a node left
        out is not known ({}: a source that cannot tell). Blocking; may raise."""
        return {}

    def held(self, rank: Rank) -> Rank:
        """``rank`` as the source's labels name it, for queries about it."""
        return rank

    def close(self) -> None:
        """Let go of what the source holds (a library handle, a writer thread)."""
