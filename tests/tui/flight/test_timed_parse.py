"""One time budget for a triage's slow dumps: the readable ones are read before any slow one
takes its full time, and said at once; the slow ones get what is left, then no more."""

from __future__ import annotations

from pathlib import Path

from ranktop.tui.flight.reader import ReadBudget
from ranktop.tui.flight.timed_parse import parse_within

BUDGET = ReadBudget(parse_seconds=20.0, first_seconds=1.0, total_seconds=30.0)
HOSTILE = range(8)  # never parsed in any time
READABLE = range(8, 12)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowOnHostile:
    """Readable files parse at once; a hostile one takes all the time it is given."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def read(self, path: Path, rank: int, mtime: float, seconds: float | None = None):
        if rank in HOSTILE:
            self.clock.now += seconds
            return None
        return f"dump {rank}"


def test_eight_hostile_dumps_cost_one_budget_and_the_readable_ones_are_said_first():
    clock = Clock()
    settled: dict[int, tuple[str, bool]] = {}
    said_at: list[tuple[float, list[int], set[int]]] = []
    files = [(rank, Path(f"fr_{rank}"), 0.0) for rank in range(12)]  # hostile ones first
    note = parse_within(SlowOnHostile(clock), files, BUDGET, clock,
                        lambda rank, found, keep: settled.__setitem__(rank, (found, keep)),
                        lambda slow: said_at.append((clock.now, list(slow), set(settled))))
    # the readable dumps were in, and said, after each hostile one's first second
    assert said_at == [(8.0, list(HOSTILE), set(READABLE))]
    assert clock.now == BUDGET.total_seconds  # not 8 x 20 s one after another
    assert note == "stopped parsing dumps after 30 s lost to slow ones"
    assert all(settled[rank] == (f"dump {rank}", True) for rank in READABLE)
    # the first slow one had its whole time, the second what was left, the others none;
    # none is tried again until it changes: the next read gets to other files
    assert settled[0] == ("fr_0: not read, parsing took more than 20 s (a hostile or broken"
                          " dump?)", True)
    assert settled[1] == ("fr_1: not read, parsing took more than 2 s", True)
    assert all(settled[rank] == (f"fr_{rank}: not read, slow to parse, and the 30 s for slow"
                                 " dumps were spent", True) for rank in range(2, 8))


def test_the_time_for_slow_dumps_spent_the_files_not_tried_are_left_for_the_next_read():
    clock = Clock()
    settled: dict[int, tuple[str, bool]] = {}
    budget = ReadBudget(parse_seconds=20.0, first_seconds=1.0, total_seconds=3.0)
    files = [(rank, Path(f"fr_{rank}"), 0.0) for rank in (0, 1, 2, 3, 8)]
    parse_within(SlowOnHostile(clock), files, budget, clock,
                 lambda rank, found, keep: settled.__setitem__(rank, (found, keep)))
    assert clock.now == 3.0
    assert settled[3] == ("fr_3: not read, not tried: the 3 s for slow dumps were spent",
                          False)
    assert settled[8] == ("fr_8: not read, not tried: the 3 s for slow dumps were spent",
                          False)
    assert settled[0][1] and settled[2][1]  # found slow: not tried again until they change


def test_without_slow_dumps_nothing_is_said_between_and_no_note():
    clock = Clock()
    said: list = []
    files = [(rank, Path(f"fr_{rank}"), 0.0) for rank in READABLE]
    note = parse_within(SlowOnHostile(clock), files, BUDGET, clock,
                        lambda *_: None, said.append)
    assert note == "" and said == [] and clock.now == 0.0
