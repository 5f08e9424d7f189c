"""Collect what a bundle holds from the engine, off the UI's thread: for the ranks that
matter (each incident's, the hang's culprits and dead, the one selected; at most
``RANKS_SAVED``), their history, alerts, GPU model and the end of each of their logs; and the
queries of the poll. The screen itself is captured by the caller, on the UI's thread.

A rank's alerts are those of the hour before the bundle's moment: one that began after it
is left out (the note counts them). A rank's log tail reaches back to when its trouble
began (its first anomaly's start), into the rotated predecessor of a file if it has to (a
dead rank's crash after logrotate): the lines from just before then, and the newest."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..core.analysis import Analysis
from ..engine.client import EngineClient
from ..engine.snapshot import Snapshot
from ..logs.line_time import first_after, line_time, local_clock
from ..logs.sizes import sizes_of
from ..logs.tail import LogLine, LogSource
from ..settings.paths import version
from .redact import scrubbed
from .saved import RankSaved, Saved, SavedLine, SavedLog, moment_of

RANKS_SAVED = 32  # ranks whose logs, alerts and history a bundle keeps
LOG_LINES_SAVED = 300  # of each log file: the rank screen's tail
LOG_BYTES_SAVED = 128 * 1024  # of each rank's excerpts together, at most
REACH_LINES = 5_000  # of a log, at most, read back to reach when the rank's trouble began
LEAD_SECONDS = 30.0  # kept of what led up to that moment


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
    moment = moment_of(snapshot, written)
    ranks = {}
    for rank in ranks_worth_saving(analysis, selected):
        ranks[rank] = await _rank(engine, snapshot, rank, moment, secrets)
    kept = replace(snapshot, analysis=replace(analysis, history=None))  # ranks' own, above
    return Saved(engine.job_name, written, kept, ranks, selected, ranktop=version())


def trouble_began(analysis: Analysis, rank: int) -> float | None:
    """When the first of the rank's anomalies began, or None when it has none."""
    return min((a.since for a in analysis.anomalies if a.rank == rank), default=None)


async def _rank(engine: EngineClient, snapshot: Snapshot, rank: int, moment: float,
                secrets: Sequence[str]) -> RankSaved:
    rank_map = snapshot.analysis.rank_map
    history = await engine.rank_history(rank, snapshot.at)
    alerts, alerts_note = await asyncio.to_thread(_alerts, engine, rank_map.ranks[rank], moment)
    since = trouble_began(snapshot.analysis, rank)
    logs, logs_note = await asyncio.to_thread(_logs, engine, rank_map, rank, since, secrets)
    model = await asyncio.to_thread(_quietly, engine.gpu_model, rank)
    return RankSaved(rank, history, tuple(tuple(scrubbed(c, secrets) for c in row)
                                          for row in alerts),
                     scrubbed(alerts_note, secrets), logs, logs_note, model or "")


def _alerts(engine: EngineClient, rank, moment: float) -> tuple[list[tuple[str, ...]], str]:
    try:
        return engine.alert_rows(rank, moment)
    except Exception as error:  # a bundle is written with what could be had
        return [], f"alerts not saved: {error}"


def _logs(engine: EngineClient, rank_map, rank: int, since: float | None,
          secrets: Sequence[str]) -> tuple[tuple[SavedLog, ...], str]:
    try:
        logs, note = engine.open_logs(rank_map, rank)
    except Exception as error:
        return (), f"logs not saved: {error}"
    room = LOG_BYTES_SAVED
    saved = []
    for log in logs:
        lines = _excerpt(reaching(log, since), room, secrets)
        room -= sum(len(line.text) for line in lines)
        saved.append(SavedLog(log.name, lines, sizes_of(log), log.status()))
        log.close()
    return tuple(saved), note


def reaching(log: LogSource, since: float | None) -> list[LogLine]:
    """The log's last lines, read further back until they reach ``since`` (a file's tail
    goes on into its rotated predecessor once the file is read whole); then, of more than
    ``LOG_LINES_SAVED``, those from ``LEAD_SECONDS`` before ``since`` and the newest."""
    count = LOG_LINES_SAVED
    lines = log.tail(count)
    while (since is not None and len(lines) >= count and count < REACH_LINES
           and not _reaches(lines, since - LEAD_SECONDS)):
        count = min(count * 4, REACH_LINES)
        lines = log.tail(count)
    if since is None or len(lines) <= LOG_LINES_SAVED:
        return lines[-LOG_LINES_SAVED:]
    start = first_after([line.text for line in lines], since - LEAD_SECONDS)
    newest = len(lines) - LOG_LINES_SAVED // 2
    if start >= len(lines) - LOG_LINES_SAVED:  # the moment is among the newest lines
        return lines[-LOG_LINES_SAVED:]
    head = lines[start:start + LOG_LINES_SAVED // 2]
    left = LogLine(f"[ranktop: {newest - start - len(head):,} lines left out, up to the "
                   "newest]", "plain", origin="ranktop")
    return [*head, left, *lines[newest:]]


def _reaches(lines: Sequence[LogLine], moment: float) -> bool:
    """Whether a line of ``lines`` is stamped at or before ``moment`` (POSIX seconds)."""
    mark = local_clock(moment)
    return any(stamp is not None and stamp <= mark
               for stamp in (line_time(line.text, mark) for line in lines))


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
