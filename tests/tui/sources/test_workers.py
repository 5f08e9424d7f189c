"""The kept worker threads: jobs done in order, errors handed to the waiter, cancelled jobs
never started, and no more threads than asked for."""

from __future__ import annotations

import threading

import pytest
from ranktop.tui.sources.workers import Workers


def test_jobs_run_on_at_most_size_threads_and_give_back_what_they_returned():
    workers = Workers(2, "test")
    jobs = [workers.submit(lambda n=n: (n, threading.current_thread())) for n in range(10)]
    for job in jobs:
        assert job.done.wait(10)
    assert [job.result()[0] for job in jobs] == list(range(10))
    assert len({id(job.result()[1]) for job in jobs}) <= 2
    assert all(job.result()[1].daemon for job in jobs)


def test_an_error_is_raised_to_the_waiter():
    job = Workers(1, "test").submit(lambda: 1 / 0)
    assert job.done.wait(10)
    with pytest.raises(ZeroDivisionError):
        job.result()


def test_a_cancelled_job_is_never_started():
    workers = Workers(1, "test")
    gate = threading.Event()
    blocker = workers.submit(gate.wait)
    ran: list[bool] = []
    later = workers.submit(lambda: ran.append(True))
    later.cancel()
    gate.set()
    after = workers.submit(lambda: None)
    assert blocker.done.wait(10) and after.done.wait(10)
    assert ran == [] and not later.started.is_set()


def test_stopped_workers_end_and_a_later_job_starts_new_ones():
    workers = Workers(2, "test-stop")
    first = workers.submit(threading.current_thread)
    assert first.done.wait(10)
    workers.stop()
    first.result().join(10)
    assert not first.result().is_alive()
    again = workers.submit(lambda: 7)
    assert again.done.wait(10) and again.result() == 7
