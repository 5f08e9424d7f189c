"""A triage that read only some ranks' logs: it says how many, names only the dead, and is
never sure of a culprit that the unread logs could contradict."""

from __future__ import annotations

from ranktop.tui.core.hang.triage import triage

from tests.tui.core.hang.test_triage import (
    dump_signal,
    healthy_tail,
    hung_job,
    progress_line,
    taken_down,
    timed_out_job,
    watchdog_line,
)


def test_every_rank_read_is_complete() -> None:
    verdict = triage(hung_job(16, dead=9), world_size=16)
    assert verdict is not None and verdict.complete
    assert (verdict.ranks_read, verdict.ranks_total) == (16, 16)
    assert "logs read for" not in verdict.summary


def test_the_only_rank_without_a_timeout_is_no_culprit_while_ranks_are_unread() -> None:
    logs = timed_out_job(16)
    logs[12] = [*healthy_tail(12), dump_signal(12)]
    assert triage(logs, 16).behind == [12]  # read in full: sure
    read = {r: lines for r, lines in logs.items() if r < 13}
    verdict = triage(read, 16, skipped=[13, 14, 15])
    assert verdict is not None and not verdict.sure and verdict.behind == []
    assert (verdict.ranks_read, verdict.ranks_total) == (13, 16) and not verdict.complete
    assert "logs read for 13 of 16 ranks" in verdict.summary
    assert "no log read for 3 of them" in verdict.awaiting


def test_a_rank_behind_the_others_is_not_named_from_a_sample() -> None:
    # read in full, rank 5's earlier SeqNum is the tell; from a sample it is not settled
    logs = {r: [watchdog_line(r), progress_line(r)] for r in range(8)}
    logs[5] = [watchdog_line(5, seq=8811), progress_line(5, seq=8811, enqueued=8811, done=8810)]
    assert triage(logs, 8).behind == [5]
    verdict = triage({r: logs[r] for r in range(6)}, 8, skipped=[6, 7])
    assert verdict is not None and not verdict.sure and verdict.behind == []


def test_a_dead_rank_read_is_sure_even_when_others_are_not_read() -> None:
    logs = hung_job(16, dead=9)
    unread = [r for r in range(16) if r not in (9, 0, 1, 2)]
    verdict = triage({r: logs[r] for r in (9, 0, 1, 2)}, 16, gone=[9], skipped=unread)
    assert verdict is not None and verdict.sure and verdict.behind == [9]
    assert verdict.dead == [9] and "logs read for 4 of 16 ranks" in verdict.summary


def test_a_vanished_rank_whose_log_was_not_read_is_not_called_dead() -> None:
    logs = timed_out_job(16)
    logs[15] = taken_down(15)
    full = triage(logs, 16, gone=[15])  # its log shows its watchdog ending it: not dead
    assert full is not None and full.dead == []
    verdict = triage({r: logs[r] for r in range(15)}, 16, gone=[15], skipped=[15])
    assert verdict is not None and verdict.dead == [] and not verdict.sure


def test_lines_given_for_a_skipped_rank_are_ignored() -> None:
    logs = hung_job(8, dead=3)
    verdict = triage(logs, 8, skipped=[3])
    assert verdict is not None and verdict.dead == [] and 3 in verdict.unread
