"""A poll's queries sent a few at a time: each answer with the seconds from its sending to
its answer, on the caller's clock."""

from __future__ import annotations

import threading

from ranktop.tui.sources.bounded_body import ByteBudget
from ranktop.tui.sources.prometheus import batch as prom_batch
from ranktop.tui.sources.prometheus.client import QueryError, Vector


class OwnClocks:
    """Answers each query after its delay on the clock of the thread that sends it: each
    sender's time is its own, whatever the others do meanwhile."""

    def __init__(self, delays: dict[str, float]) -> None:
        self.delays = delays
        self.local = threading.local()

    def clock(self) -> float:
        return getattr(self.local, "now", 1_800_000_000.0)

    def query(self, promql: str, budget: object = None, at: float | None = None) -> Vector:
        self.local.now = self.clock() + self.delays[promql]
        if promql.startswith("fails"):
            raise QueryError("timed out", "no answer in 30 s")
        return Vector([])


def timed(client: OwnClocks, queries: dict[str, str], budget: ByteBudget | None = None
          ) -> dict[str, float]:
    found = prom_batch.answers(client, queries, budget or ByteBudget(1_000), lambda _: False,
                               threading.Event(), client.clock)
    return {arrived.key: arrived.seconds for arrived in found}


def test_each_answer_comes_with_the_seconds_it_took_on_the_given_clock():
    delays = {f"q{i}": float(i) for i in range(10)}
    client = OwnClocks(delays)
    assert timed(client, {f"key{i}": f"q{i}" for i in range(10)}) == {
        f"key{i}": float(i) for i in range(10)}


def test_a_failure_is_timed_too_and_a_query_not_sent_took_nothing():
    client = OwnClocks({"fails": 30.0, "ok": 1.0})
    assert timed(client, {"slow": "fails", "quick": "ok"}) == {"slow": 30.0, "quick": 1.0}
    spent = ByteBudget(1)
    spent.left = 0
    assert timed(client, {"slow": "fails"}, spent) == {"slow": 0.0}
