"""Collect what a bundle holds from the engine, off the UI's thread: for the ranks that
matter (each incident's, the hang's culprits and dead, the one selected; at most
``RANKS_SAVED``), their history, alerts, GPU model and the end of each of their logs; and the
queries of the poll. The screen itself is captured by the caller, on the UI's thread."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..core.analysis import Analysis
from ..engine.client import EngineClient
from ..engine.snapshot import Snapshot
from ..logs.sizes import sizes_of
from ..settings.paths import version
from .redact import scrubbed
from .saved import RankSaved, Saved, SavedLine, SavedLog

RANKS_SAVED = 32  # ranks whose logs, alerts and history a bundle keeps
LOG_LINES_SAVED = 300  # of each log file: the rank screen's tail
LOG_BYTES_SAVED = 128 * 1024  # of each rank's excerpts together, at most


def ranks_worth_saving(analysis: Analysis, selected: int | None) -> list[int]:
    """The ranks a reader of the bundle will look at, most telling first."""
    hang = analysis.hang
    ranked: list[int | None] = [*(i.rank for i in analysis.incidents)]
    if hang is not None:
        ranked += [*hang.dead, *hang.behind]
    ranked += [a.rank for a in analysis.anomalies]
    ranked.append(selected)
    size = len(analysis.rank_map)
    found = [r for r in dict.fromkeys(ranked) if r is not None and 0 <= r < size]
    return found[:RANKS_SAVED]


async def gather(engine: EngineClient, snapshot: Snapshot, selected: int | None,
                 written: float, secrets: Sequence[str] = ()) -> Saved:
    """The bundle's console for ``snapshot`` (live, or a past moment's: ``snapshot.at``)."""
    analysis = snapshot.analysis
    ranks = {}
    for rank in ranks_worth_saving(analysis, selected):
        ranks[rank] = await _rank(engine, snapshot, rank, secrets)
    kept = replace(snapshot, analysis=replace(analysis, history=None))  # ranks' own, above
    return Saved(engine.job_name, written, kept, ranks, selected, ranktop=version())


async def _rank(engine: EngineClient, snapshot: Snapshot, rank: int,
                secrets: Sequence[str]) -> RankSaved:
    rank_map = snapshot.analysis.rank_map
    history = await engine.rank_history(rank, snapshot.at)
    alerts, alerts_note = await asyncio.to_thread(_alerts, engine, rank_map.ranks[rank])
    logs, logs_note = await asyncio.to_thread(_logs, engine, rank_map, rank, secrets)
    model = await asyncio.to_thread(_quietly, engine.gpu_model, rank)
    return RankSaved(rank, history, tuple(tuple(scrubbed(c, secrets) for c in row)
                                          for row in alerts),
                     scrubbed(alerts_note, secrets), logs, logs_note, model or "")


def _alerts(engine: EngineClient, rank) -> tuple[list[tuple[str, ...]], str]:
    try:
        return engine.alert_rows(rank)
    except Exception as error:  # a bundle is written with what could be had
        return [], f"alerts not saved: {error}"


def _logs(engine: EngineClient, rank_map, rank: int,
          secrets: Sequence[str]) -> tuple[tuple[SavedLog, ...], str]:
    try:
        logs, note = engine.open_logs(rank_map, rank)
    except Exception as error:
        return (), f"logs not saved: {error}"
    room = LOG_BYTES_SAVED
    saved = []
    for log in logs:
        lines = _excerpt(log.tail(LOG_LINES_SAVED), room, secrets)
        room -= sum(len(line.text) for line in lines)
        saved.append(SavedLog(log.name, lines, sizes_of(log), log.status()))
        log.close()
    return tuple(saved), note


def _excerpt(lines: Iterable, room: int, secrets: Sequence[str]) -> tuple[SavedLine, ...]:
    """The newest of ``lines`` that fit in ``room`` characters, oldest first."""
    kept: list[SavedLine] = []
    for line in reversed(list(lines)):
        room -= len(line.text)
        if room < 0:
            break
        kept.append(SavedLine(scrubbed(line.text, secrets), line.kind, line.origin))
    return tuple(reversed(kept))


def _quietly(ask, *args):
    try:
        return ask(*args)
    except Exception:
        return ""
