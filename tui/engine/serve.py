"""The engine's side of an engine in its own process: it builds the source, runs a
``ThreadEngine`` and answers the UI's requests over a pipe, several at once (a rank's
alerts need not wait for a slow poll).

What crosses, per poll, is the snapshot without the job's history (a rank's share of it is
sent when asked for), packed by ``wire.Sent``: only what changed. An answer over
``link.MESSAGE_BYTES`` is refused with a line that says so. The rank screens' logs are
opened and read here, a page at a time (``remote_log.LogShelf``), and released when the
screen closes them. If the UI goes away (the pipe closes), the engine ends."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ..core.events import EventLog
from ..core.moment import use_utc
from ..settings.config import Settings
from ..sources.base import Source
from .link import MessageTooBig, packed
from .protocol import (
    AlertRows,
    Alive,
    At,
    Backfill,
    FindPipes,
    GpuModel,
    Poll,
    Queries,
    RankHistoryOf,
    Request,
    RequestDumps,
    Settle,
)
from .remote_log import LOG_REQUESTS, LogShelf
from .snapshot import RankHistory, Snapshot
from .threaded import ThreadEngine
from .wire import Sent


def serve(conn: Connection, settings: Settings,
          make_source: Callable[[Settings], Source], event_log: Path | None) -> None:
    """The engine process's main: ("ready", job, snapshot) or ("failed", why), then answers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ctrl+c is the UI's to handle
    use_utc(settings.utc)  # the times the engine words (anomalies, notes) as the UI's
    try:
        source = make_source(settings)
    except Exception as error:  # said by the UI, which exits with it
        conn.send(("failed", str(error) or error.__class__.__name__))
        return
    engine = ThreadEngine(settings, source, EventLog(event_log) if event_log else None)
    sent = Sent()
    conn.send(("ready", engine.job_name, sent.compact(engine.latest)))
    try:
        asyncio.run(answer(conn, engine, sent))
    finally:
        engine.close()


async def answer(conn: Connection, engine: ThreadEngine, sent: Sent) -> None:
    """Answer requests (id, request) with (id, ok, value) until the pipe closes."""
    loop = asyncio.get_running_loop()
    closed = loop.create_future()
    lock = threading.Lock()
    served = Served(engine, sent, LogShelf(engine.open_logs))

    def reply(request_id: int, ok: bool, value: object) -> None:
        try:
            data = packed((request_id, ok, value))
        except MessageTooBig as error:
            data = packed((request_id, False, f"the engine's answer was refused: {error}"))
        with lock, contextlib.suppress(OSError):  # the UI hung up: the engine ends anyway
            conn.send_bytes(data)

    async def run(request_id: int, request: Request) -> None:
        try:
            value = await HANDLERS[type(request)](served, request)
        except Exception as error:
            reply(request_id, False, str(error) or error.__class__.__name__)
        else:
            reply(request_id, True, value)

    def read() -> None:
        while True:
            try:
                request_id, request = conn.recv()
            except (EOFError, OSError):
                loop.call_soon_threadsafe(closed.set_result, None)
                return
            loop.call_soon_threadsafe(
                functools.partial(asyncio.ensure_future, run(request_id, request)))

    threading.Thread(target=read, name="engine-requests", daemon=True).start()
    try:
        await closed
    finally:
        served.logs.close_all()


@dataclass
class Served:
    """What the engine's answers are worked out from: the engine, what the UI holds of its
    snapshots, and the logs open for rank screens."""

    engine: ThreadEngine
    sent: Sent
    logs: LogShelf


Handler = Callable[[Served, Any], Awaitable[object]]


def _in_thread(work: Callable[[Served, Any], object]) -> Handler:
    """A blocking answer (files, HTTP), worked out in a thread."""
    async def handle(served: Served, request: Any) -> object:
        return await asyncio.to_thread(work, served, request)
    return handle


async def _alive(served: Served, request: Alive) -> bool:
    return True


async def _poll(served: Served, request: Poll) -> Snapshot:
    return served.sent.compact(await served.engine.poll(request.maps))


async def _settle(served: Served, request: Settle) -> Snapshot:
    return served.sent.compact(await served.engine.settle(request.timeout))


async def _history(served: Served, request: RankHistoryOf) -> RankHistory:
    return await served.engine.rank_history(request.rank, request.at)


async def _at(served: Served, request: At) -> Snapshot:
    """A past moment, packed whole: the live polls' deltas go on as they were."""
    return Sent().compact(await served.engine.at(request.moment, request.maps))


# The one dispatch table: each request type to what answers it.
HANDLERS: dict[type[Request], Handler] = {
    Alive: _alive, Poll: _poll, Settle: _settle, RankHistoryOf: _history,
    At: _at,
    AlertRows: _in_thread(lambda s, r: s.engine.alert_rows(r.rank, r.until)),
    Backfill: _in_thread(lambda s, r: s.engine.backfill(r.rank_map, r.rank)),
    GpuModel: _in_thread(lambda s, r: s.engine.gpu_model(r.rank)),
    Queries: _in_thread(lambda s, r: s.engine.queries()),
    FindPipes: _in_thread(lambda s, r: s.engine.find_pipes()),
    RequestDumps: _in_thread(lambda s, r: s.engine.request_dumps(r.pipes)),
    **{kind: _in_thread(lambda s, r, read=read: read(s.logs, r))
       for kind, read in LOG_REQUESTS.items()},
}
