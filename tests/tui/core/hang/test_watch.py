"""When the analysis asks for a hang triage, and which finished verdict it shows."""

from __future__ import annotations

from dataclasses import replace

from ranktop.tui.core.hang.triage import triage
from ranktop.tui.core.hang.watch import (
    CLEAR_SECONDS,
    OLD_VERDICT_SECONDS,
    TRIAGE_EVERY_SECONDS,
    HangWatch,
    TriageAsk,
    TriageResult,
)
from ranktop.tui.core.model import RankMap

from tests.tui.core.hang.test_triage import hung_job, timed_out_job

GRID = RankMap.grid(["gpu-node-000", "gpu-node-001"], 8, source="test")


class Recorder:
    """A triage that only records what it was asked; a test finishes runs by hand."""

    def __init__(self) -> None:
        self.asks: list[TriageAsk] = []
        self.result: TriageResult | None = None

    def request(self, ask: TriageAsk) -> None:
        self.asks.append(ask)

    def latest(self) -> TriageResult | None:
        return self.result

    def finish(self, ask: TriageAsk, logs: dict[int, list[str]]) -> None:
        verdict = triage(logs, len(ask.rank_map), ask.gone)
        verdict = verdict and replace(verdict, as_of=ask.as_of)
        self.result = TriageResult(ask.ask_id, ask.as_of, verdict, 16, 16)


def asker(now: float):
    return lambda ask_id: TriageAsk(ask_id, now, GRID, suspects=(9,), gone=(9,))


def test_nothing_is_asked_while_the_job_moves() -> None:
    recorder = Recorder()
    watch = HangWatch(recorder)
    assert watch.update(100.0, False, asker(100.0)) is None
    assert recorder.asks == []


def test_a_stuck_job_asks_at_once_then_every_interval_and_never_waits() -> None:
    recorder = Recorder()
    watch = HangWatch(recorder)
    assert watch.update(100.0, True, asker(100.0)) is None  # asked; nothing finished yet
    assert watch.update(102.0, True, asker(102.0)) is None
    assert [a.as_of for a in recorder.asks] == [100.0]
    watch.update(100.0 + TRIAGE_EVERY_SECONDS, True, asker(100.0 + TRIAGE_EVERY_SECONDS))
    assert [a.ask_id for a in recorder.asks] == [1, 2]


def test_the_newest_finished_verdict_is_shown_with_its_age() -> None:
    recorder = Recorder()
    watch = HangWatch(recorder)
    watch.update(100.0, True, asker(100.0))
    recorder.finish(recorder.asks[0], hung_job(16, dead=9))
    verdict = watch.update(102.0, True, asker(102.0))
    assert verdict is not None and verdict.behind == [9] and verdict.age(102.0) == 2.0
    anomaly = watch.anomaly(verdict, 102.0)
    assert (anomaly.rank, anomaly.since, anomaly.confirmed) == (9, 100.0, True)
    old = watch.anomaly(verdict, 100.0 + OLD_VERDICT_SECONDS + 5)
    assert old.summary.endswith(f"(logs read {OLD_VERDICT_SECONDS + 5:.0f} s ago)")


def test_an_unsure_verdict_is_pending_on_the_job() -> None:
    recorder = Recorder()
    watch = HangWatch(recorder)
    watch.update(100.0, True, asker(100.0))
    logs = timed_out_job(16)
    del logs[4]
    recorder.finish(replace(recorder.asks[0], gone=()), logs)
    verdict = watch.current()
    assert verdict is not None and not verdict.sure
    anomaly = watch.anomaly(verdict, 102.0)
    assert anomaly.rank is None and anomaly.pending and "rank 4" in anomaly.awaiting


def test_a_verdict_of_an_earlier_hang_is_not_shown_for_the_next() -> None:
    recorder = Recorder()
    watch = HangWatch(recorder)
    watch.update(100.0, True, asker(100.0))
    first = recorder.asks[0]
    for t in range(110, 110 + int(CLEAR_SECONDS) + 2, 2):  # the job runs again
        assert watch.update(t, False, asker(t)) is None
    watch.update(200.0, True, asker(200.0))  # a new hang: asked at once
    recorder.finish(first, hung_job(16, dead=9))  # the first hang's run ends late
    assert watch.current() is None
    recorder.finish(recorder.asks[1], hung_job(16, dead=9))
    assert watch.current() is not None


def test_a_run_that_broke_or_read_nothing_keeps_the_last_verdict() -> None:
    recorder = Recorder()
    watch = HangWatch(recorder)
    watch.update(100.0, True, asker(100.0))
    recorder.finish(recorder.asks[0], hung_job(16, dead=9))
    assert watch.update(102.0, True, asker(102.0)).behind == [9]
    watch.update(100.0 + TRIAGE_EVERY_SECONDS, True, asker(110.0))
    broke = recorder.asks[-1]
    recorder.result = TriageResult(broke.ask_id, broke.as_of, None, 0, 16)  # what a crash gives
    kept = watch.update(112.0, True, asker(112.0))
    assert kept is not None and kept.behind == [9] and kept.as_of == 100.0  # shown with its age
    recorder.result = TriageResult(broke.ask_id, broke.as_of, None, 16, 16)  # all read, no hang
    assert watch.update(114.0, True, asker(114.0)) is None


# --- hysteresis: a verdict ends when its evidence is gone -------------------------------------

def shown_dead_rank_nine() -> tuple[Recorder, HangWatch]:
    recorder = Recorder()
    watch = HangWatch(recorder)
    watch.update(100.0, True, asker(100.0))
    recorder.finish(recorder.asks[0], hung_job(16, dead=9))
    assert watch.update(102.0, True, asker(102.0)).behind == [9]
    return recorder, watch


def test_one_moved_step_or_one_calm_poll_does_not_end_a_hang() -> None:
    _, watch = shown_dead_rank_nine()
    kept = watch.update(104.0, False, asker(104.0), moving=False, down=())
    assert kept is not None and kept.behind == [9]
    assert watch.update(106.0, True, asker(106.0)).behind == [9]
    assert watch.since == 100.0  # the same hang: its start does not move


def test_a_dead_culprit_still_down_keeps_the_verdict_while_the_job_steps() -> None:
    recorder, watch = shown_dead_rank_nine()
    for t in range(104, 160, 2):
        verdict = watch.update(float(t), True, asker(t), moving=True, down={9})
        assert verdict is not None and verdict.behind == [9], t
    assert watch.since == 100.0
    assert all(a.since is None or a.since <= 100.0 for a in recorder.asks)


def test_the_hang_ends_once_its_dead_rank_is_back_and_the_job_keeps_stepping() -> None:
    _, watch = shown_dead_rank_nine()
    assert watch.update(104.0, True, asker(104.0), moving=False, down=()) is not None
    assert watch.update(106.0, False, asker(106.0), moving=True, down=()) is None
    assert watch.since is None


def test_nothing_stuck_for_a_while_ends_a_hang_without_a_step_metric() -> None:
    _, watch = shown_dead_rank_nine()
    t = 104.0
    while t < 104.0 + CLEAR_SECONDS:
        assert watch.update(t, False, asker(t), down=()) is not None, t
        t += 2.0
    assert watch.update(t, False, asker(t), down=()) is None


def test_a_hang_still_open_asks_for_dumps_as_old_as_its_first_ask_allowed() -> None:
    recorder = Recorder()
    watch = HangWatch(recorder)
    first = lambda ask_id: replace(asker(100.0)(ask_id), since=90.0)  # noqa: E731
    watch.update(100.0, True, first)
    recorder.finish(recorder.asks[0], hung_job(16, dead=9))
    later = lambda ask_id: replace(asker(112.0)(ask_id), since=111.0)  # noqa: E731
    watch.update(112.0, True, later, moving=True, down={9})
    assert [a.since for a in recorder.asks] == [90.0, 90.0]


def test_an_unsure_verdict_is_read_again_as_soon_as_the_last_read_ended() -> None:
    recorder = Recorder()
    watch = HangWatch(recorder)
    watch.update(100.0, True, asker(100.0))
    watch.update(102.0, True, asker(102.0))
    assert len(recorder.asks) == 1  # the first read has not ended: nothing more is asked
    logs = timed_out_job(16)
    logs[4] = logs[4][:-2]  # rank 4 has not timed out yet
    recorder.finish(replace(recorder.asks[0], gone=()), logs)
    watch.update(104.0, True, asker(104.0))
    assert len(recorder.asks) == 2  # not sure: read again at once, not 10 s on
    recorder.finish(recorder.asks[1], hung_job(16, dead=9))
    watch.update(106.0, True, asker(106.0))
    watch.update(108.0, True, asker(108.0))
    assert len(recorder.asks) == 2  # sure: the next read waits for the interval


def test_a_hang_opened_by_a_rank_down_stays_open_while_its_first_read_is_pending() -> None:
    """A slow machine's triage (or a replay, which reads only its last frame) has given no
    verdict yet while the other ranks still finish a step or two: the hang opened when rank
    9 went down is the same hang, and says so by its start, as a prompt answer would."""
    recorder = Recorder()
    watch = HangWatch(recorder)
    watch.update(100.0, True, asker(100.0), moving=True, down={9})
    for t in range(102, 108, 2):  # no verdict yet; the job still steps a little
        watch.update(float(t), True, asker(t), moving=True, down={9})
    assert [a.ask_id for a in recorder.asks] == [1]  # one hang, asked about once
    recorder.finish(recorder.asks[-1], hung_job(16, dead=9))
    assert watch.update(108.0, True, asker(108.0), moving=True, down={9}).behind == [9]
    assert watch.since == 100.0


def test_a_hang_first_answered_late_starts_when_it_was_first_asked_about() -> None:
    recorder = Recorder()
    watch = HangWatch(recorder)
    watch.update(100.0, True, asker(100.0), down={9})
    watch.update(100.0 + TRIAGE_EVERY_SECONDS, True, asker(100.0 + TRIAGE_EVERY_SECONDS),
                 down={9})
    recorder.finish(recorder.asks[-1], hung_job(16, dead=9))  # the second ask's answer
    assert watch.update(120.0, True, asker(120.0), down={9}).behind == [9]
    assert watch.since == 100.0
