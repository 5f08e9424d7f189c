"""Reading many ranks' logs within a budget: the order given, bytes per rank and in all, a
deadline; the ranks not reached are left out."""

from __future__ import annotations

from itertools import count
from pathlib import Path

from ranktop.tui.core.model import RankMap
from ranktop.tui.logs.collect import ReadBudget, batches_by_rank, lines_by_rank

GRID = RankMap.grid(["gpu-node-000", "gpu-node-001"], 4, source="test")
KB = 1024


def big_log(path: Path, rank: int, size: int) -> Path:
    lines, total, i = [], 0, 0
    while total < size:
        line = f"[rank{rank}]: step {i} loss 2.137 tokens/s 3.74e6 " + "x" * 60
        lines.append(line)
        total += len(line) + 1
        i += 1
    lines.append(f"[rank{rank}]: the last line")
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def files(tmp_path: Path, size: int = 1024 * KB) -> dict[int, list[Path]]:
    return {r: [big_log(tmp_path / f"rank{r}.log", r, size)] for r in range(len(GRID))}


def budget(max_bytes: int = 1 << 30, rank_bytes: int = 1 << 30, deadline: float = 1e18,
           clock=lambda: 0.0) -> ReadBudget:
    return ReadBudget(deadline, max_bytes, rank_bytes, clock)


def test_each_rank_is_read_only_its_share_back_from_its_end(tmp_path: Path) -> None:
    spend = budget(rank_bytes=16 * KB)
    found = lines_by_rank(files(tmp_path), GRID, 200, spend)
    assert sorted(found) == list(range(8))
    assert all(lines[-1] == f"[rank{r}]: the last line" for r, lines in found.items())
    assert 8 * 8 * KB < spend.spent <= 8 * 16 * KB  # 1 MB each on disk
    assert all(sum(len(x) + 1 for x in lines) <= 16 * KB for lines in found.values())


def test_the_bytes_in_all_stop_the_read_in_the_order_given(tmp_path: Path) -> None:
    order = [6, 2, 7, 0, 1, 3, 4, 5]
    spend = budget(max_bytes=3 * 16 * KB, rank_bytes=16 * KB)
    found = lines_by_rank({r: files(tmp_path)[r] for r in order}, GRID, 200, spend)
    assert list(found) == [6, 2, 7]
    assert spend.spent <= 3 * 16 * KB


def test_without_a_budget_every_rank_is_there(tmp_path: Path) -> None:
    assert sorted(lines_by_rank(files(tmp_path, 64 * KB), GRID, 200)) == list(range(8))


def test_the_ranks_after_the_deadline_are_left_out(tmp_path: Path) -> None:
    ticks = count()
    found = lines_by_rank(files(tmp_path, 8 * KB), GRID, 200,
                          budget(deadline=3, clock=lambda: next(ticks)))
    assert list(found) == [0, 1, 2]


def test_a_shared_file_counts_its_head_and_its_tail_against_the_budget(tmp_path: Path) -> None:
    shared = tmp_path / "slurm.out"
    shared.write_text("".join(f"{r}: step {i} loss 2.137 {'y' * 80}\n"
                              for i in range(4000) for r in range(8)))
    spend = budget(max_bytes=100 * KB)
    found = lines_by_rank({r: [shared] for r in range(8)}, GRID, 200, spend)
    assert sorted(found) == list(range(8)) and all(found.values())
    assert spend.spent <= 100 * KB


def test_batches_give_each_rank_once_with_all_its_files(tmp_path: Path) -> None:
    two = {r: [big_log(tmp_path / f"out{r}.log", r, 2 * KB),
               big_log(tmp_path / f"err{r}.log", r + 100, 2 * KB)] for r in range(8)}
    parts = list(batches_by_rank(two, GRID, 200, batch=3))
    assert [len(part) for part in parts] == [3, 3, 2]
    merged = {rank: lines for part in parts for rank, lines in part.items()}
    assert merged == lines_by_rank(two, GRID, 200)
    assert all(f"[rank{r + 100}]: the last line" in merged[r] for r in range(8))
