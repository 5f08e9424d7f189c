"""Property tests: any bytes in a shared log give each line a rank of the file, or None."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.core.model import RankMap
from ranktop.tui.logs.split import FileRanks, RankIndex

from tests.tui.properties import FEW, RAW_LINES

GRID = RankMap.grid(["host-1.cluster", "host-2.cluster"], 4, source="test")


@FEW
@given(st.lists(RAW_LINES, max_size=8), st.frozensets(st.integers(-2, 10), max_size=8))
def test_a_line_is_one_of_the_files_ranks_or_none(lines, owners):
    ranks = FileRanks(RankIndex(GRID), owners)
    ranks.learn(b"\n".join(lines))
    for line in lines:
        rank = ranks.rank_of(line)
        assert rank is None or rank in owners


def test_a_label_of_thousands_of_digits_names_no_rank():
    digits = b"7" * 5000
    ranks = FileRanks(RankIndex(GRID), range(8))
    ranks.learn(b"host-1:42:43 [0] NCCL INFO comm 0x1 rank " + digits + b" nranks 8 cudaDev 0")
    for line in (digits + b": x", b"[rank" + digits + b"]: x", b"[default" + digits + b"]: x"):
        assert ranks.rank_of(line) is None
