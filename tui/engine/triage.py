"""The hang triage of a job's logs and Flight Recorder dumps, as the engine builds it for
the live pipeline and for each replayed moment."""

from __future__ import annotations

from functools import partial

from ..core.hang.checkpoint import checkpoint_pattern
from ..flight.watch import FlightDumps
from ..logs.agent_console import agent_failures
from ..logs.discovery import preset_name
from ..logs.rank_logs import RankLogs
from ..logs.triage_worker import TriageWorker
from ..settings.config import Settings
from ..sources.base import Source

# How long a triage run waits for the dumps' reading (its own thread); a longer read is
# judged by the run after it.
FLIGHT_WAIT_SECONDS = 5.0


def hang_triage(settings: Settings, source: Source, logs: RankLogs) -> TriageWorker | None:
    """A worker reading the ranks' ``logs`` and Flight Recorder dumps for a hang's verdict
    (None: the job's logs and dumps are nowhere to be read)."""
    dumps = settings.flight_recorder or source.flight_spec
    flight = FlightDumps(dumps, wait_seconds=FLIGHT_WAIT_SECONDS).verdict if dumps else None
    reader = logs.triage_batches if logs.spec else None
    if reader is None and flight is None:
        return None
    agents = partial(agent_failures, logs.spec) if preset_name(logs.spec) == "torchrun" \
        else None
    return TriageWorker(reader, dumps=flight, log_spec=logs.spec,
                        checkpoint_pattern=checkpoint_pattern(settings.checkpoint_pattern),
                        agents=agents)
