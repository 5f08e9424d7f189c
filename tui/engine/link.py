"""The pipe between the UI and its engine process, bounded both ways.

Every message is pickled before it is sent and refused, with one line saying so, when it is
over ``MESSAGE_BYTES``: a giant answer (a log flood, a bug) must not fill both processes'
memory. The biggest message a working engine sends is a past moment's whole snapshot,
8.5 MiB at 16,384 ranks (docs/performance.md).

``Link`` is the UI's end: each request (``protocol``) gets a ``Future`` that its answer
settles, and a blocking request waits for it at most its deadline (``EngineSilent`` then): a
hung engine must not hold a worker for ever."""

from __future__ import annotations

import contextlib
import gc
import itertools
import math
import os
import socket
import threading
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from concurrent.futures import TimeoutError as FutureTimeout
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import TypeVar

from .client import EngineRefused, EngineSilent, EngineStopped
from .protocol import Request

MESSAGE_BYTES = 64 * 1024 * 1024  # a pickled request or answer, at most

Answer = TypeVar("Answer")


class MessageTooBig(EngineRefused):
    """A request or an answer over the size a message may have (one line: how big)."""


def packed(message: object, limit: int | None = None) -> bytes:
    """``message`` pickled; ``MessageTooBig`` when it is over ``limit`` (``MESSAGE_BYTES``)."""
    limit = MESSAGE_BYTES if limit is None else limit
    data = bytes(ForkingPickler.dumps(message))
    if len(data) > limit:
        raise MessageTooBig(f"a message of {_size(len(data))} is over the {_size(limit)}"
                            " one may carry between the console and its engine")
    return data


def _size(count: int) -> str:
    return f"{count / 2**20:.1f} MiB" if count >= 2**20 else f"{count:,} bytes"


def unpickled(data: bytes) -> object:
    """``data`` unpickled with the garbage collector paused: the objects of a snapshot
    would otherwise set off full collections over the whole console's heap, holding the
    GIL for hundreds of milliseconds at 16,384 ranks (measured: 8-254 ms a snapshot,
    3-10 ms paused)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return ForkingPickler.loads(data)
    finally:
        if paused:
            gc.enable()


def hang_up(conn: Connection) -> None:
    """Shut the pipe's socket both ways. Closing its descriptor alone leaves the socket open
    while a reader thread is blocked in it, and the other end would never see the end."""
    with (contextlib.suppress(OSError, ValueError),
          socket.socket(fileno=os.dup(conn.fileno())) as end):
        end.shutdown(socket.SHUT_RDWR)


class Link:
    """The UI's end of the pipe to one engine process: requests (id, request) out, answers
    (id, ok, value) back to the request that asked, in a reader thread.

    ``ended`` says why the engine is gone once the pipe closes (its exit status);
    ``answer_seconds`` caps every request's deadline (none by default)."""

    def __init__(self, conn: Connection, ended: Callable[[], str],
                 answer_seconds: float = math.inf) -> None:
        self.conn = conn
        self.answer_seconds = answer_seconds
        self.stopped = ""  # why the engine is gone; "" while it answers
        self._closed = False
        self._ended = ended
        self._ids = itertools.count()
        self._pending: dict[int, Future] = {}
        self._send_lock = threading.Lock()
        threading.Thread(target=self._read, name="engine-answers", daemon=True).start()

    def ask(self, request: Request[Answer]) -> Future[Answer]:
        """A request; its future holds the answer, or the engine's one-line error as
        ``EngineRefused``, or ``EngineStopped``, or ``MessageTooBig`` for a request too big."""
        future: Future[Answer] = Future()
        try:
            request_id = next(self._ids)
            data = packed((request_id, request))
        except MessageTooBig as error:
            future.set_exception(error)
            return future
        self._pending[request_id] = future
        try:
            with self._send_lock:
                self.conn.send_bytes(data)
        except (OSError, ValueError):
            self.stopped = self.stopped or f"the engine process stopped ({self._ended()})"
        if self.stopped:  # gone before or while asking: no answer will come
            self._fail_pending()
        return future

    def deadline(self, request: Request) -> float:
        """The seconds ``request``'s answer may take here."""
        return min(request.seconds, self.answer_seconds)

    def answer(self, request: Request[Answer]) -> Answer:
        """A request's answer, waited for (blocking) at most its deadline."""
        future = self.ask(request)
        seconds = self.deadline(request)
        try:
            return future.result(timeout=seconds)
        except FutureTimeout:
            self.give_up(future)
            raise EngineSilent(f"the engine did not answer in {seconds:g} s"
                               f" ({type(request).__name__})") from None

    def give_up(self, future: Future) -> None:
        """No longer wait for ``future``: its answer, if one comes, is dropped."""
        future.cancel()
        self._forget(future)

    def _forget(self, future: Future) -> None:
        """No longer wait for ``future``'s answer: a hung engine's would pile up."""
        for request, waiting in list(self._pending.items()):
            if waiting is future:
                self._pending.pop(request, None)

    def close(self) -> None:
        """Hang up: the engine sees the end of the pipe and returns."""
        self._closed = True
        hang_up(self.conn)
        self.conn.close()

    def _read(self) -> None:
        while True:
            try:
                request, ok, value = unpickled(self.conn.recv_bytes())
            except (EOFError, OSError):
                break
            except TypeError:  # closed here while reading: the connection's handle is gone
                if not self._closed:
                    raise
                break
            future = self._pending.pop(request, None)
            # A request cancelled while it waited (its worker was) wants no answer.
            if future is not None and not future.cancelled():
                with contextlib.suppress(InvalidStateError):  # cancelled meanwhile
                    if ok:
                        future.set_result(value)
                    else:
                        future.set_exception(EngineRefused(value))
        # Hung up here: the engine's exit is its closer's to wait for (two threads waiting
        # for one process race, and one of them may read no exit status).
        why = "closed" if self._closed else self._ended()
        self.stopped = f"the engine process stopped ({why})"
        self._fail_pending()

    def _fail_pending(self) -> None:
        while self._pending:
            with contextlib.suppress(KeyError, InvalidStateError):
                self._pending.popitem()[1].set_exception(EngineStopped(self.stopped))
