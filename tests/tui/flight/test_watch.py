"""The dumps of a hang, poll after poll: every dump written since the hang began counts,
whatever start the reads before assumed; an earlier hang's stay out."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

from ranktop.tui.flight.watch import FlightDumps

FROZEN = Path(__file__).parent / "real_2_14" / "frozen"  # rank 2 frozen, no dump
T0 = 1_800_000_000.0  # the hang began (the step's last advance)


def landed(folder: Path, at: float) -> str:
    """The real dumps of ranks 0, 1 and 3, written at ``at``; their pattern."""
    for path in FROZEN.glob("fr_*"):
        shutil.copy(path, folder / path.name)
        os.utime(folder / path.name, (at, at))
    return str(folder / "fr_")


def test_dumps_read_before_the_start_was_known_still_count_once_it_is(tmp_path: Path) -> None:
    dumps = FlightDumps(landed(tmp_path, T0 + 25.0), wait_seconds=30.0)
    # A console started late first judges a stretch in which the job never moved ...
    assert dumps.verdict(4, None).culprits == (2,)
    # ... then a longer one that sees the step's last advance: the same dumps count.
    verdict = dumps.verdict(4, T0)
    assert verdict.culprits == (2,) and verdict.seq == 282 and verdict.notes == ()


def test_a_start_later_than_the_dumps_leaves_them_out_as_an_earlier_hangs(
        tmp_path: Path) -> None:
    dumps = FlightDumps(landed(tmp_path, T0 + 25.0), wait_seconds=30.0)
    assert dumps.verdict(4, T0).culprits == (2,)
    # The job moved again and stopped 10 s after they landed: within the clock skew
    # allowed for, but read during the earlier hang, they are not this one's evidence.
    assert dumps.verdict(4, T0 + 35.0) is None


def test_the_readable_dumps_verdict_is_given_while_hostile_ones_are_read(
        tmp_path: Path, monkeypatch) -> None:
    from ranktop.tui.flight import reader

    pattern = landed(tmp_path, T0 + 25.0)
    for rank in range(4, 12):
        (tmp_path / f"fr_{rank}").write_bytes(b"HOSTILE")
        os.utime(tmp_path / f"fr_{rank}", (T0 + 25.0, T0 + 25.0))
    release = threading.Event()

    class Stuck:
        """A hostile dump takes its first try's second, then stays stuck until released."""

        def __init__(self, budget: reader.ReadBudget) -> None:
            self.budget = budget

        def __enter__(self) -> Stuck:
            return self

        def __exit__(self, *_: object) -> None:
            pass

        def read(self, path: Path, rank: int, mtime: float, seconds: float | None = None):
            if path.read_bytes() != b"HOSTILE":
                return reader.read_one(path, rank, self.budget, mtime)
            if seconds is not None and seconds <= self.budget.first_seconds:
                return None
            release.wait(10)
            return None

    monkeypatch.setattr(reader, "DumpParser", Stuck)
    # long enough for the readable dumps on a loaded machine; the stuck ones wait longer
    dumps = FlightDumps(pattern, wait_seconds=3.0)
    try:
        verdict = dumps.verdict(12, T0)
        assert verdict is not None and verdict.culprits == (2,)  # from ranks 0, 1 and 3
        assert verdict.unreadable[4] == "still being read (slow to parse)"
    finally:
        release.set()
        dumps._reading.join(10)
