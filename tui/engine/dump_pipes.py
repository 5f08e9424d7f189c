"""The ranks' Flight Recorder dump pipes, found and written by the engine: the only thing
ranktop ever writes into a job's files, and only when the user configured the pipes, enabled
it, and confirmed on screen (``flight.pipes`` says what is written where). The screen asks;
the engine, the one room that touches the job, does it. A bundle's engine refuses both."""

from __future__ import annotations

from pathlib import Path

from ..flight.dump_paths import PatternError
from ..flight.pipes import describe, find_pipes, named_pipes, request_dumps
from ..settings.config import Settings
from .client import EngineRefused
from .protocol import PipesFound

DUMPS_OFF = "dumps on demand are off: set [logs] dump_pipes and request_dumps = true"


class DumpsRefused(EngineRefused):
    """Dumps on demand cannot be asked for (off, or a bad pattern): the one line says why."""


def dumps_allowed(settings: Settings) -> bool:
    return bool(settings.request_dumps and settings.dump_pipes)


def pipes_found(settings: Settings, world_size: int) -> PipesFound:
    """The ranks' pipes as the confirmation describes them, and the FIFOs among them."""
    if not dumps_allowed(settings):
        raise DumpsRefused(DUMPS_OFF)
    try:
        pipes = find_pipes(settings.dump_pipes, world_size)
    except (PatternError, OSError) as error:
        raise DumpsRefused(f"cannot look for the pipes: {error}") from None
    return PipesFound(describe(pipes, world_size), named_pipes(pipes)[0])


def dumps_asked(settings: Settings, pipes: dict[int, Path]) -> str:
    """One byte written to each of ``pipes`` that is still a FIFO; what that gave."""
    if not dumps_allowed(settings):
        raise DumpsRefused(DUMPS_OFF)
    return request_dumps(pipes).summary()
