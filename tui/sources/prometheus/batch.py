"""A poll's queries sent a few at a time, each answer handed back as soon as it is decoded.

At most ``CONCURRENT`` queries are in flight at once (Prometheus evaluates up to 20 at a
time by default; more from one poll would only queue there and crowd other users). The
answers come back in the order they arrive, and the next query goes out once one has been
read, so the caller can join each to the ranks and let it go: a poll holds at most
CONCURRENT decoded answers at once, never all of them.

Each answer comes with how long it took: from when its query was sent to when its answer
was in and decoded, on the caller's clock (a query waiting for a free sender is not yet
sent).

Once a query fails in a way that says the server is gone or wants to be left alone
(``give_up``), or the poll's byte budget is spent, the queries not yet sent are not sent:
they come back as ``NOT_SENT``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple, Protocol

from ..bounded_body import ByteBudget
from ..workers import Workers
from .client import QueryError, Vector

CONCURRENT = 4
NOT_SENT = None
Outcome = Vector | QueryError | None  # None: NOT_SENT
_SENDERS = Workers(CONCURRENT, "ranktop-poll")
Clock = Callable[[], float]


class Arrived(NamedTuple):
    """A query's answer, and the seconds from its sending to its answer (0: not sent)."""

    key: str
    outcome: Outcome
    seconds: float


class Querying(Protocol):
    """What answers instant queries: a client, or a past copy's RangeClient (past)."""

    def query(self, promql: str, budget: ByteBudget | None = None,
              at: float | None = None) -> Vector: ...


def answers(client: Querying, queries: Mapping[str, str], budget: ByteBudget,
            give_up: Callable[[QueryError], bool], stop: threading.Event, clock: Clock
            ) -> Iterator[Arrived]:
    """Every query's answer, in the order the answers are in: the vector, the failure, or
    NOT_SENT. ``stop`` is set once a failure gives up (and when the caller stops reading):
    from then on nothing more is sent, in this call or any other given it."""
    arrived: queue.SimpleQueue[tuple[str, Outcome | BaseException, float]] = queue.SimpleQueue()
    waiting = iter(queries.items())

    def send_next() -> int:
        item = next(waiting, None)
        if item is None:
            return 0
        key, expression = item
        _SENDERS.submit(lambda: arrived.put((key, *_timed(client, expression, budget, stop,
                                                           give_up, clock))))
        return 1

    # A query is sent once an earlier answer has been read: never more than CONCURRENT
    # answers in flight or waiting to be read.
    out = sum(send_next() for _ in range(CONCURRENT))
    try:
        while out:
            key, outcome, seconds = arrived.get()
            if isinstance(outcome, BaseException) and not isinstance(outcome, QueryError):
                raise outcome  # a bug, not the server: raised in the poll's thread
            yield Arrived(key, outcome, seconds)
            del outcome
            out += send_next() - 1
    except GeneratorExit:
        stop.set()  # a caller that stops reading sends nothing more
        raise


def _timed(client: Querying, expression: str, budget: ByteBudget, stop: threading.Event,
           give_up: Callable[[QueryError], bool], clock: Clock
           ) -> tuple[Outcome | BaseException, float]:
    """The query's outcome, and the seconds it took (0 where it was not sent)."""
    sent = clock()
    outcome = _ask(client, expression, budget, stop, give_up)
    return outcome, 0.0 if outcome is NOT_SENT else max(0.0, clock() - sent)


def _ask(client: Querying, expression: str, budget: ByteBudget, stop: threading.Event,
         give_up: Callable[[QueryError], bool]) -> Outcome | BaseException:
    if stop.is_set() or budget.spent:
        return NOT_SENT
    try:
        return client.query(expression, budget)
    except QueryError as error:
        if give_up(error):
            stop.set()  # at once: the other senders send nothing more
        return error.bare()
    except BaseException as error:  # handed to the poll's thread
        return error
