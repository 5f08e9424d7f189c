"""The connection pool the client's requests share, and what happens to it when one of them
is abandoned at its deadline.

An abandoned request may be stuck in a connection of the pool (a server that never sends
its headers). Closing the whole pool would end it, and every other request reading an
answer from that pool with it (they failed with "Bad file descriptor"). So the pool is only
retired: requests from then on get a new one, and the retired pool is closed once the
requests it still carries have ended, which ends the abandoned one too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import httpx


@dataclass(eq=False)
class _Pool:
    client: httpx.Client
    users: int = 0
    retired: bool = False


class Lease:
    """One request's use of a pool: taken in the request's worker, given back when it ends
    or when its caller abandons it, whichever comes first."""

    def __init__(self) -> None:
        self.pool: _Pool | None = None
        self.ended = False  # given back (done, or abandoned)


class Pools:
    """The pool of the moment, made by ``make`` when first needed, and the retired ones."""

    def __init__(self, make: Callable[[], httpx.Client]) -> None:
        self._make = make
        self._current: _Pool | None = None
        self._retired: list[_Pool] = []
        self._lock = threading.Lock()

    def take(self, lease: Lease) -> httpx.Client | None:
        """The client ``lease``'s request sends through; None once it was abandoned."""
        with self._lock:
            if lease.ended:
                return None
            if self._current is None:
                self._current = _Pool(self._make())
            lease.pool = self._current
            lease.pool.users += 1
            return lease.pool.client

    def give_back(self, lease: Lease) -> None:
        """The request has ended (again: nothing)."""
        self._end(lease, retire=False)

    def abandon(self, lease: Lease) -> None:
        """The request was given up on: its pool is retired, and closed once its other
        requests have ended."""
        self._end(lease, retire=True)

    def _end(self, lease: Lease, retire: bool) -> None:
        with self._lock:
            pool, ended, lease.ended = lease.pool, lease.ended, True
            if pool is None or ended:
                return
            pool.users -= 1
            if retire and not pool.retired:
                pool.retired = True
                self._retired.append(pool)
                if self._current is pool:
                    self._current = None
            closing = pool.retired and pool.users == 0
            if closing:
                self._retired.remove(pool)
        if closing:
            pool.client.close()

    def close(self) -> None:
        """Close every pool, in use or not."""
        with self._lock:
            pools = [*self._retired, *([self._current] if self._current else [])]
            self._current, self._retired = None, []
        for pool in pools:
            pool.client.close()
