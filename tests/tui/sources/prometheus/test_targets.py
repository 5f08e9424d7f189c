"""Why a rank down cannot be scraped, from Prometheus's targets API: a frozen process times
the scrape out, a gone one refuses it (the errors as Prometheus 3 words them)."""

from __future__ import annotations

from ranktop.tui.core.detect.down import SCRAPE_REFUSED, SCRAPE_TIMING_OUT
from ranktop.tui.sources.prometheus.client import QueryError, Vector
from ranktop.tui.sources.prometheus.targets import scrape_errors, scrape_words

FROZEN = 'Get "http://127.0.0.1:19506/metrics": context deadline exceeded'
KILLED = ('Get "http://127.0.0.1:19502/metrics": dial tcp 127.0.0.1:19502: connect:'
          ' connection refused')


def target(port: int, health: str, error: str = "") -> dict:
    return {"labels": {"instance": f"127.0.0.1:{port}", "job": "realjob"},
            "scrapePool": "realjob", "health": health, "lastError": error}


class Backend:
    """A Prometheus's targets and which target each rank's step series came from."""

    def __init__(self, targets: list, fails: bool = False) -> None:
        self.active = targets
        self.fails = fails
        self.asked: list[str] = []
        self.pools: list[str] = []  # the scrape jobs whose targets were asked for

    def targets(self, budget=None, scrape_pool: str = "") -> dict:
        self.pools.append(scrape_pool)
        if self.fails:
            raise QueryError("HTTP 404", "no targets API here")
        return {"activeTargets": [t for t in self.active if not scrape_pool or (
            isinstance(t, dict) and t.get("scrapePool") == scrape_pool)], "droppedTargets": []}

    def query(self, promql: str, budget=None, at=None) -> Vector:
        self.asked.append(promql)
        return Vector([{"metric": {"rank": str(rank), "instance": f"127.0.0.1:{19500 + rank}",
                                   "job": "realjob"}, "value": [0, "1"]} for rank in range(8)])


def errors(backend: Backend, down: list[int]) -> dict[int, str]:
    return scrape_errors(backend, down, "training_step", '{job="realjob"}', "rank")


def test_the_scrape_error_says_frozen_or_gone() -> None:
    assert scrape_words(FROZEN) == SCRAPE_TIMING_OUT
    assert scrape_words(KILLED) == SCRAPE_REFUSED
    assert scrape_words("server returned HTTP status 500") == (
        "scrape failing: server returned HTTP status 500")
    assert scrape_words("bad\x1b[31m") == "scrape failing: bad\ufffd[31m"
    assert scrape_words("") == ""


def test_each_rank_down_gets_its_own_target_s_words() -> None:
    backend = Backend([target(19500 + r, "up") for r in range(8) if r not in (2, 6)]
                      + [target(19502, "down", KILLED), target(19506, "down", FROZEN)])
    assert errors(backend, [2, 6]) == {2: SCRAPE_REFUSED, 6: SCRAPE_TIMING_OUT}
    assert backend.asked == ['group by (rank, instance, job) (last_over_time('
                             'training_step{job="realjob"}[900s]))']
    assert backend.pools == ["realjob"]  # the job's own targets, not the cluster's


def test_another_scrape_jobs_targets_are_never_asked_for() -> None:
    other = {**target(19502, "down", "context deadline exceeded"), "scrapePool": "other"}
    backend = Backend([other, target(19502, "down", KILLED)])
    assert errors(backend, [2]) == {2: SCRAPE_REFUSED} and backend.pools == ["realjob"]


def test_nothing_is_said_without_a_failing_target_or_a_targets_api() -> None:
    healthy = Backend([target(19500 + r, "up") for r in range(8)])
    assert errors(healthy, [6]) == {}
    assert errors(Backend([], fails=True), [6]) == {}  # a store or a front: no scrape
    assert errors(Backend([{"health": "down"}, "junk", target(19506, "down", FROZEN)]),
                  [6]) == {6: SCRAPE_TIMING_OUT}
    assert errors(Backend([target(19506, "down", FROZEN)]), []) == {}
