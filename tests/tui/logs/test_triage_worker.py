"""Hang triage in its own thread: it never holds up the caller, reads suspects first, stops
at its budget and then says how much it read, and keeps at most one ask waiting."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from ranktop.tui.core.hang.checkpoint import LOG, Checkpoint, checkpoint_pattern
from ranktop.tui.core.hang.watch import TriageAsk
from ranktop.tui.core.model import RankMap
from ranktop.tui.logs.attempts import marker
from ranktop.tui.logs.rank_logs import RankLogs
from ranktop.tui.logs.triage_worker import TriageLimits, TriageWorker, reading_order

from tests.tui.core.hang.test_triage import (
    dump_signal,
    healthy_tail,
    hung_job,
    taken_down,
    timed_out_job,
)

GRID = RankMap.grid([f"gpu-node-{n:03d}" for n in range(4)], 8, source="test")  # 32 ranks
KB = 1024
WAIT = 30.0  # a deadline for a thread to finish, never a measure of speed


def ask(ask_id: int = 1, suspects: tuple[int, ...] = (), gone: tuple[int, ...] = ()
        ) -> TriageAsk:
    return TriageAsk(ask_id, 1000.0 + ask_id, GRID, suspects, gone)


class Blocked:
    """A reader that holds every run until released, counting the runs it was given."""

    def __init__(self, logs: dict[int, list[str]]) -> None:
        self.logs = logs
        self.entered = threading.Event()
        self.release = threading.Event()
        self.orders: list[list[int]] = []

    def __call__(self, rank_map, order, budget, batch):
        self.orders.append(list(order))
        self.entered.set()
        assert self.release.wait(WAIT)
        return [{r: self.logs.get(r, []) for r in order}]


def test_the_reading_order_is_suspects_first_then_every_other_rank_once() -> None:
    assert reading_order([7, 3, 7, 99, -1], 8) == [7, 3, 0, 1, 2, 4, 5, 6]


def test_a_request_returns_while_the_read_is_blocked_and_the_verdict_comes_after() -> None:
    reader = Blocked(hung_job(32, dead=9))
    worker = TriageWorker(reader)
    try:
        worker.request(ask(suspects=(9,), gone=(9,)))
        assert reader.entered.wait(WAIT)
        assert worker.latest() is None and worker.runs == 0
        assert not worker.wait(0.0)
    finally:
        reader.release.set()
    assert worker.wait(WAIT)
    result = worker.latest()
    assert result is not None and worker.runs == 1 and result.complete
    assert result.verdict is not None and result.verdict.behind == [9]
    assert result.verdict.as_of == 1001.0 and reader.orders[0][0] == 9


def test_asks_that_come_during_a_run_wait_and_only_the_newest_is_run() -> None:
    reader = Blocked(hung_job(32, dead=9))
    worker = TriageWorker(reader)
    try:
        worker.request(ask(1))
        assert reader.entered.wait(WAIT)
        worker.request(ask(2))
        worker.request(ask(3))
    finally:
        reader.release.set()
    assert worker.wait(WAIT)
    assert worker.runs == 2 and worker.latest().ask_id == 3


def test_a_reader_that_fails_leaves_no_verdict_and_the_worker_free() -> None:
    def broken(rank_map, order, budget, batch):
        raise RuntimeError("disk on fire")

    worker = TriageWorker(broken)
    worker.request(ask())
    assert worker.wait(WAIT)
    assert worker.latest().verdict is None and "disk on fire" in worker.error


def write_logs(root: Path, logs: dict[int, list[str]], padding: int) -> RankLogs:
    """Each rank's lines at the end of a file of ``padding`` bytes of training chatter."""
    for rank, lines in logs.items():
        chatter = [f"[rank{rank}]: step {i} loss 2.137 " + "z" * 80 for i in range(padding // 110)]
        (root / f"rank{rank}.log").write_text("".join(f"{x}\n" for x in [*chatter, *lines]))
    return RankLogs(str(root / "rank{rank}.log"))


def test_a_budget_spent_part_way_gives_an_unsure_verdict_that_says_how_much_was_read(
        tmp_path: Path) -> None:
    logs = timed_out_job(32)
    logs[20] = [dump_signal(20)]  # no timeout, an earlier work: read in full, the culprit
    rank_logs = write_logs(tmp_path, logs, 256 * KB)
    full = TriageWorker(rank_logs.triage_batches).run(ask())
    assert full.complete and full.verdict.sure and full.verdict.behind == [20]
    limits = TriageLimits(seconds=WAIT, max_bytes=12 * 16 * KB, rank_bytes=16 * KB)
    partial = TriageWorker(rank_logs.triage_batches, limits).run(ask())
    assert (partial.ranks_read, partial.ranks_total) == (12, 32)
    assert partial.bytes_read <= limits.max_bytes
    verdict = partial.verdict
    assert verdict is not None and not verdict.sure and verdict.behind == []
    assert "logs read for 12 of 32 ranks" in verdict.summary


def test_a_dead_suspect_is_read_first_and_named_within_a_small_budget(tmp_path: Path) -> None:
    logs = {r: taken_down(r) for r in range(32)}
    logs[27] = hung_job(32, dead=27)[27]
    rank_logs = write_logs(tmp_path, logs, 256 * KB)
    limits = TriageLimits(seconds=WAIT, max_bytes=4 * 16 * KB, rank_bytes=16 * KB)
    result = TriageWorker(rank_logs.triage_batches, limits).run(ask(suspects=(27,), gone=(27,)))
    assert result.ranks_read == 4 and result.bytes_read <= limits.max_bytes
    assert result.verdict.sure and result.verdict.behind == [27]


def test_slow_file_lookups_leave_time_to_read_the_suspects(tmp_path: Path) -> None:
    now = [0.0]

    class SlowLookups(RankLogs):
        def files(self, rank_map, rank, explain=True):
            now[0] += 1.0  # each lookup takes a second of the run's ten
            return super().files(rank_map, rank, explain)

    logs = {r: taken_down(r) for r in range(32)}
    logs[27] = hung_job(32, dead=27)[27]
    write_logs(tmp_path, logs, 8 * KB)
    rank_logs = SlowLookups(str(tmp_path / "rank{rank}.log"))
    worker = TriageWorker(rank_logs.triage_batches, TriageLimits(seconds=10.0),
                          clock=lambda: now[0])
    result = worker.run(ask(suspects=(27,), gone=(27,)))
    assert 0 < result.ranks_read <= 6 and result.bytes_read > 0
    assert result.verdict.sure and result.verdict.behind == [27]


def test_with_nothing_asked_the_worker_ends_at_once_not_after_its_rest(monkeypatch) -> None:
    from ranktop.tui.logs import triage_worker
    monkeypatch.setattr(triage_worker, "REST_PER_RUN_SECOND", 1e6)  # a rest longer than WAIT
    worker = TriageWorker(lambda rank_map, order, budget, batch: [{r: [] for r in order}])
    worker.request(ask())
    assert worker.wait(WAIT)  # `report` waits for this: it must not wait out a rest
    assert worker.runs == 1


def local(*fields: int) -> float:
    """The POSIX time of a wall-clock time on this machine (as the logs' stamps are)."""
    return time.mktime((*fields, 0, 0, -1))


def test_a_past_moment_is_judged_by_the_lines_stamped_by_then() -> None:
    worker = TriageWorker(lambda rank_map, order, budget, batch: [timed_out_job(32)])
    worker.until = local(2026, 11, 22, 3, 4, 0)  # five seconds before the watchdog spoke
    before = worker.run(ask()).verdict
    assert before is None or not before.reporting
    worker.until = local(2026, 11, 22, 3, 4, 10)
    after = worker.run(ask()).verdict
    assert after is not None and sorted(after.reporting) == list(range(32))


def test_a_past_moment_before_the_restart_judges_the_attempt_that_hung() -> None:
    """torchrun's next attempt, written after the moment, had not begun then: its marker
    must not hide the timeouts the old attempt ended in."""
    restarted = {rank: [*lines, marker(1), "2026-11-22 03:05:00,000 INFO resumed at step 100"]
                 for rank, lines in timed_out_job(32).items()}
    worker = TriageWorker(lambda rank_map, order, budget, batch: [restarted])
    worker.until = local(2026, 11, 22, 3, 4, 30)  # the timeouts logged, the restart not yet
    then = worker.run(ask()).verdict
    assert then is not None and sorted(then.reporting) == list(range(32))
    worker.until = local(2026, 11, 22, 3, 5, 30)  # the new attempt is stepping
    assert worker.run(ask()).verdict is None


def test_the_agents_word_names_the_rank_that_exited_and_its_node_mates_stopped() -> None:
    quiet = {rank: healthy_tail(rank) for rank in range(32)}  # a kill leaves no error
    node = tuple(range(8, 16))  # every series of node 1 vanished in one scrape
    asked: list[tuple] = []
    killed = ("E1128 15:13:33.873000 15776 torch/distributed/elastic/multiprocessing/api.py:"
              "1002] failed (exitcode: -9) local_rank: 3 (pid: 15864) of binary: python3")

    def agents(since, until):
        asked.append((since, until))
        return {"gpu-node-001": [killed]}

    alone = TriageWorker(lambda rank_map, order, budget, batch: [quiet])
    assert alone.run(ask(gone=node)).verdict.dead == list(node)  # nothing tells them apart
    worker = TriageWorker(lambda rank_map, order, budget, batch: [quiet], agents=agents)
    worker.until = 2000.0
    verdict = worker.run(ask(gone=node)).verdict
    assert verdict.dead == [11] and verdict.behind == [11]
    assert verdict.stopped == [8, 9, 10, 12, 13, 14, 15]
    assert asked == [(None, 2000.0)]  # the stall's start (none seen) and the moment


def test_a_past_moment_asks_for_the_dumps_written_by_then() -> None:
    asked: list[tuple] = []
    worker = TriageWorker(None, dumps=lambda world, since, until: asked.append(
        (world, since, until)))
    worker.until = 1234.0
    worker.run(ask())
    assert asked == [(32, None, 1234.0)]


def test_the_verdict_carries_the_newest_checkpoint_line_by_the_configured_pattern() -> None:
    logs = timed_out_job(32)
    logs[0] = ["ckpt written: iter=4200", "Saving checkpoint at step 4300", *logs[0]]
    logs[5] = ["ckpt written: iter=4100", *logs[5]]
    read = lambda rank_map, order, budget, batch: [logs]  # noqa: E731
    usual = TriageWorker(read).run(ask()).verdict
    assert usual.checkpoint == Checkpoint(4300, LOG, "Saving checkpoint at step 4300", 0)
    own = checkpoint_pattern(r"ckpt written: iter=(?P<step>\d+)")
    configured = TriageWorker(read, checkpoint_pattern=own).run(ask()).verdict
    assert configured.checkpoint == Checkpoint(4200, LOG, "ckpt written: iter=4200", 0)


def test_a_past_moment_whose_lines_are_no_longer_on_disk_says_so() -> None:
    logs = timed_out_job(32)
    for rank in range(16, 32):  # written anew by a restart: only a later attempt's lines
        logs[rank] = [f"[rank{rank}]:[I1122 03:20:00.000 init.cpp:1] a new attempt begins"]
    worker = TriageWorker(lambda rank_map, order, budget, batch: [logs])
    worker.until = local(2026, 11, 22, 3, 4, 10)
    verdict = worker.run(ask()).verdict
    assert verdict is not None and verdict.log_gaps is not None
    assert verdict.log_gaps.after_moment == tuple(range(16, 32))
    assert "the log of 16 ranks (ranks 16, 17, 18, 19, 20, ...) begins after this moment: " \
        "its lines of then are no longer on disk" in verdict.summary
    assert "begins after this moment" in verdict.log_gaps.of_rank(20)
    worker.until = None  # live, the same files hold no gap
    live = worker.run(ask()).verdict
    assert live is not None and "begins after" not in live.summary
