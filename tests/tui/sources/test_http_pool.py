"""The client's connection pools: an abandoned request retires its pool, which is closed once
the requests it still carries have ended; a request abandoned before it began sends nothing."""

from __future__ import annotations

from ranktop.tui.sources.http_pool import Lease, Pools


class FakePool:
    made = 0

    def __init__(self) -> None:
        FakePool.made += 1
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_an_abandoned_request_retires_its_pool_closed_once_the_others_end():
    pools = Pools(FakePool)
    stuck, reading = Lease(), Lease()
    first = pools.take(stuck)
    assert pools.take(reading) is first
    pools.abandon(stuck)
    assert not first.closed  # the other request still reads from it
    later = Lease()
    assert pools.take(later) is not first  # new requests, new connections
    pools.give_back(reading)
    assert first.closed
    pools.give_back(stuck)  # the stuck request ends at last: nothing more to do
    pools.give_back(later)
    assert not pools.take(Lease()).closed


def test_a_request_abandoned_before_a_worker_took_it_up_gets_no_connection():
    pools = Pools(FakePool)
    lease = Lease()
    pools.abandon(lease)
    assert pools.take(lease) is None


def test_closing_closes_every_pool_in_use_or_retired():
    pools = Pools(FakePool)
    stuck, reading = Lease(), Lease()
    retired = pools.take(stuck)
    pools.take(reading)
    pools.abandon(stuck)
    current = pools.take(Lease())
    pools.close()
    assert retired.closed and current.closed
