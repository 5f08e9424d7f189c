"""A frozen rank (alive, its log silent, its GPU idle) is named the culprit from the logs
and the metrics, without Flight Recorder dumps: simulator -> logs -> triage -> analysis, and
the rules on their own."""

from __future__ import annotations

from dataclasses import replace

from ranktop.tui.core.hang.frozen import FROZEN_AFTER_SECONDS, FrozenRanks, idle_gpus
from ranktop.tui.core.hang.triage import triage
from ranktop.tui.core.model import Frame
from ranktop.tui.simulator.log_writer import WATCHDOG_TIMEOUT_MS
from ranktop.tui.simulator.scenario import Fault

from tests.tui.conftest import START
from tests.tui.core.hang.test_triage import healthy_tail, timed_out_job
from tests.tui.core.job_run import POLL, hang_rows, job, polls

FROZEN = 11
HANG_AT = 20.0


def frozen_job(**params):
    hang = Fault("collective_hang", FROZEN, HANG_AT, 100.0,
                 {"cause": "missing", "dumps": "none", **params})
    return job((hang,))


def test_the_frozen_rank_is_named_within_two_polls_of_the_last_watchdog(tmp_path) -> None:
    last_watchdog = HANG_AT + (WATCHDOG_TIMEOUT_MS + 900) / 1000  # the latest one can fire
    named_at = None
    for analysis in polls(frozen_job(), tmp_path, until=last_watchdog + 3 * POLL):
        t = analysis.frame.time - START
        rows = hang_rows(analysis)
        if t > HANG_AT + 12:  # the job stood still past its stall: the suspect, on its rank
            assert [row.rank for row in rows] == [FROZEN], t
        hang = analysis.hang
        if hang is not None and hang.sure and named_at is None:
            named_at = t
            assert hang.behind == [FROZEN]
            assert hang.summary.startswith(f"rank {FROZEN} is frozen, the others wait for it")
            assert "GPU is idle" in hang.summary
            assert rows[0].confirmed and rows[0].rank == FROZEN
    assert named_at is not None and named_at <= last_watchdog + 2 * POLL


def test_without_gpu_metrics_time_names_it(tmp_path) -> None:
    cluster = frozen_job()
    frame_at = cluster.frame_at

    def without_sm(t: float) -> Frame:  # as if DCGM's profiling metrics were off
        frame = frame_at(t)
        return replace(frame, values={k: v for k, v in frame.values.items()
                                      if k != "sm_active"})

    cluster.frame_at = without_sm
    named = [a for a in polls(cluster, tmp_path, until=HANG_AT + 30 + 20)
             if a.hang is not None and a.hang.sure]
    assert named and named[0].hang.behind == [FROZEN]
    assert "still none" in named[0].hang.summary and "GPU" not in named[0].hang.summary


def test_without_logs_or_dumps_the_idle_gpu_is_still_the_suspect(tmp_path) -> None:
    rows = [(a.frame.time - START, hang_rows(a)) for a in polls(
        frozen_job(), tmp_path, until=HANG_AT + 40, logs=False)]
    assert all(rows == [] for t, rows in rows if t < HANG_AT)
    late = [rows for t, rows in rows if t > HANG_AT + 12]
    assert late and all([(r.rank, r.pending) for r in found] == [(FROZEN, True)]
                        for found in late)
    assert "neither is configured" in late[-1][0].awaiting


def test_no_idle_gpu_before_the_hang_and_none_in_a_whole_job_stall(tmp_path) -> None:
    stall = Fault("job_stall", None, 20.0, 40.0, {})
    for analysis in polls(job((stall,)), tmp_path, until=70.0):
        assert idle_gpus(analysis.frame.values["sm_active"], 0.0) == []
        assert hang_rows(analysis) == [] or hang_rows(analysis)[0].rank is None


# --- the rules on their own ------------------------------------------------------------------

def waiting_for(rank: int, world: int = 16, at: float = 100.0):
    logs = timed_out_job(world)
    logs[rank] = healthy_tail(rank)
    verdict = triage(logs, world)
    return replace(verdict, as_of=at)


def spinning(world: int = 16, idle: tuple[int, ...] = (), at: float = 100.0) -> Frame:
    sm = [12.0 + 0.1 * r for r in range(world)]
    for rank in idle:
        sm[rank] = 0.2
    return Frame(time=at, values={"sm_active": sm}, job={})


def test_an_unsure_verdict_stays_unsure_without_an_idle_gpu_or_time() -> None:
    frozen = FrozenRanks()
    frozen.observe(spinning())
    verdict = frozen.judge(waiting_for(5))
    assert not verdict.sure and verdict.behind == [] and verdict.awaited == [5]


def test_an_idle_gpu_among_spinning_ones_names_the_rank_the_others_wait_for() -> None:
    frozen = FrozenRanks()
    frozen.observe(spinning(idle=(5,)))
    verdict = frozen.judge(waiting_for(5))
    assert verdict.sure and verdict.behind == [5]
    assert verdict.summary.startswith("rank 5 is frozen, the others wait for it: it logged no"
                                      " timeout in ALLREDUCE SeqNum 8812, the other 15 live"
                                      " ranks did; its GPU is idle (SM 0 %")


def test_an_idle_gpu_that_is_not_the_awaited_rank_names_nothing() -> None:
    frozen = FrozenRanks()
    frozen.observe(spinning(idle=(6,)))
    assert not frozen.judge(waiting_for(5)).sure


def test_still_the_only_one_without_a_timeout_after_a_while_is_frozen() -> None:
    frozen = FrozenRanks()
    assert not frozen.judge(waiting_for(5, at=100.0)).sure
    assert not frozen.judge(waiting_for(5, at=100.0 + FROZEN_AFTER_SECONDS - 2)).sure
    later = frozen.judge(waiting_for(5, at=100.0 + FROZEN_AFTER_SECONDS))
    assert later.sure and later.behind == [5] and "still none 10 s after" in later.summary


def test_a_rank_whose_log_was_not_read_is_never_named_frozen() -> None:
    logs = timed_out_job(16)
    del logs[5]
    verdict = replace(triage(logs, 16), as_of=100.0)
    frozen = FrozenRanks()
    frozen.observe(spinning(idle=(5,)))
    frozen.judge(verdict)
    assert not frozen.judge(replace(verdict, as_of=200.0)).sure


def test_many_idle_gpus_are_no_suspects() -> None:
    assert idle_gpus(spinning(idle=tuple(range(9))).values["sm_active"], 0.0) == []
    assert [g.rank for g in idle_gpus(spinning(idle=(3, 4)).values["sm_active"], 0.0)] == [3, 4]
    assert idle_gpus([0.5] * 16, 0.0) == []  # every GPU idle: a stall, not a frozen rank
