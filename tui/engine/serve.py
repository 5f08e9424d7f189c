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
import functools
import signal
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

from ..core.events import EventLog
from ..core.moment import use_utc
from ..settings.config import Settings
from ..sources.base import Source
from .link import MessageTooBig, packed
from .remote_log import LOG_REQUESTS, LogShelf
from .snapshot import Snapshot
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
    """Answer requests (id, kind, args) with (id, ok, value) until the pipe closes."""
    loop = asyncio.get_running_loop()
    closed = loop.create_future()
    lock = threading.Lock()
    logs = LogShelf(engine.open_logs)

    def reply(request: int, ok: bool, value: object) -> None:
        try:
            data = packed((request, ok, value))
        except MessageTooBig as error:
            data = packed((request, False, f"the engine's answer was refused: {error}"))
        with lock:
            conn.send_bytes(data)

    async def run(request: int, kind: str, args: tuple) -> None:
        try:
            if kind in LOG_REQUESTS:  # file I/O: in a thread
                value = await asyncio.to_thread(LOG_REQUESTS[kind], logs, *args)
            else:
                value = await HANDLERS[kind](engine, sent, *args)
        except Exception as error:
            reply(request, False, str(error) or error.__class__.__name__)
        else:
            reply(request, True, value)

    def read() -> None:
        while True:
            try:
                request, kind, args = conn.recv()
            except (EOFError, OSError):
                loop.call_soon_threadsafe(closed.set_result, None)
                return
            loop.call_soon_threadsafe(
                functools.partial(asyncio.ensure_future, run(request, kind, args)))

    threading.Thread(target=read, name="engine-requests", daemon=True).start()
    try:
        await closed
    finally:
        logs.close_all()


async def _alive(engine: ThreadEngine, sent: Sent) -> bool:
    """That the engine answers at all, whatever its other requests are doing."""
    return True


async def _poll(engine: ThreadEngine, sent: Sent) -> Snapshot:
    return sent.compact(await engine.poll())


async def _settle(engine: ThreadEngine, sent: Sent, timeout: float) -> Snapshot:
    return sent.compact(await engine.settle(timeout))


def _in_thread(method: Callable[..., object]):
    """A blocking request of the engine's, answered in a thread."""
    async def handle(engine: ThreadEngine, sent: Sent, *args: object) -> object:
        return await asyncio.to_thread(method, engine, *args)
    return handle


async def _plan(engine: ThreadEngine, sent: Sent, version: int, maps: tuple) -> dict:
    return dict(await engine.plan_maps(version, maps))


async def _history(engine: ThreadEngine, sent: Sent, rank: int, at: float | None = None
                   ) -> object:
    return await engine.rank_history(rank, at)


async def _at(engine: ThreadEngine, sent: Sent, moment: float) -> Snapshot:
    """A past moment, packed whole: the live polls' deltas go on as they were."""
    return Sent().compact(await engine.at(moment))


HANDLERS = {
    "alive": _alive, "poll": _poll, "settle": _settle, "plan_maps": _plan, "rank_history": _history,
    "at": _at,
    "alert_rows": _in_thread(ThreadEngine.alert_rows),
    "backfill": _in_thread(ThreadEngine.backfill),
    "gpu_model": _in_thread(ThreadEngine.gpu_model),
    "queries": _in_thread(ThreadEngine.queries),
}
