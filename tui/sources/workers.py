"""A few threads kept for blocking work (HTTP exchanges), instead of one started per request.

Daemon threads: one stuck on a server that never answers must not keep ranktop from
quitting (its caller has long given up on it at its deadline).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Job(Generic[T]):
    """One piece of work handed to the workers, and its outcome once ``done`` is set."""

    def __init__(self, work: Callable[[], T]) -> None:
        self.work = work
        self.started = threading.Event()
        self.done = threading.Event()
        self.cancelled = False
        self.value: T | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        if self.cancelled:
            return
        self.started.set()
        try:
            self.value = self.work()
        except BaseException as error:  # handed to whoever waits on the job, raised there
            self.error = error
        finally:
            self.done.set()

    def cancel(self) -> None:
        """Not to be started, if no worker has taken it up yet."""
        self.cancelled = True

    def result(self) -> T:
        """What the work returned (raises what it raised); call once ``done`` is set."""
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]


class Workers:
    """``size`` daemon threads, started on first use, taking jobs in the order given."""

    def __init__(self, size: int, name: str) -> None:
        self.size = size
        self.name = name
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._starting = threading.Lock()
        self._threads: list[threading.Thread] = []

    def submit(self, work: Callable[[], T]) -> Job[T]:
        job = Job(work)
        self._start()
        self._jobs.put(job)
        return job

    def _start(self) -> None:
        with self._starting:
            while len(self._threads) < self.size:
                thread = threading.Thread(target=self._serve, daemon=True,
                                          name=f"{self.name}-{len(self._threads)}")
                thread.start()
                self._threads.append(thread)

    def stop(self) -> None:
        """Each thread ends once it is idle (one busy ends after its job); a later submit
        starts new ones."""
        with self._starting:
            for _ in self._threads:
                self._jobs.put(None)
            self._threads = []

    def _serve(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job.run()
            del job  # what it returned is its waiter's, not this idle thread's
