"""Triage from Flight Recorder dumps: missing ranks, mismatches, the wavefront rule."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from ranktop.tui.core.hang.flight import (
    BY_RETIRED,
    NOT_SAID,
    DumpSet,
    Entry,
    Frontier,
    Group,
    RankDump,
)
from ranktop.tui.core.hang.flight_triage import analyse_dumps
from ranktop.tui.flight.reader import read_dumps

SITE = "train.py:143 in sync_gradients"


def entry(group: str, seq: int, state: str = "started", op: str = "nccl:all_reduce",
          sizes: tuple = ((1024,),), dtype: str = "Float", site: str = SITE,
          p2p: bool = False) -> Entry:
    return Entry(record_id=seq, group=group, seq=seq, op=op, state=state, input_sizes=sizes,
                 output_sizes=sizes, input_dtypes=(dtype,), output_dtypes=(dtype,),
                 is_p2p=p2p, call_site=site)


def dump(rank: int, groups: dict[str, tuple[int, ...]], entries: list[Entry],
         frontiers: dict[str, Frontier] | None = None) -> RankDump:
    return RankDump(rank, f"/fr/{rank}", "2.10",
                    {g: Group(g, f"desc{g}", ranks) for g, ranks in groups.items()},
                    frontiers or {}, tuple(sorted(entries, key=lambda e: e.record_id)),
                    len(entries))


def world(n: int, per_rank) -> DumpSet:
    dumps = {}
    for rank in range(n):
        made = per_rank(rank)
        if made is not None:
            dumps[rank] = made
    return DumpSet(n, dumps)


ALL4 = {"0": (0, 1, 2, 3)}


def waiting(rank: int, seq: int = 10) -> RankDump:
    return dump(rank, ALL4, [entry("0", seq - 1, "completed"), entry("0", seq)])


def test_a_rank_that_never_joined_is_the_culprit_with_its_call_site() -> None:
    def made(rank: int) -> RankDump:
        if rank == 2:  # stuck in Python: its last collective completed
            return dump(2, ALL4, [entry("0", 9, "completed", site="train.py:99 in load")],
                        {"0": Frontier(9, 9, 9)})
        return waiting(rank)
    verdict = analyse_dumps(world(4, made))
    assert verdict.kind == "missing" and verdict.culprits == (2,)
    assert (verdict.group, verdict.seq, verdict.op) == ("pg 0 (desc0)", 10, "nccl:all_reduce")
    assert verdict.call_site == "train.py:99 in load"
    assert verdict.waiting == (0, 1, 3) and verdict.waiting_call_site == SITE
    assert "rank 2 never joined nccl:all_reduce SeqNum 10" in verdict.summary


def test_a_mismatch_in_sizes_names_the_odd_rank_and_its_site() -> None:
    def made(rank: int) -> RankDump:
        if rank == 1:
            return dump(1, ALL4, [entry("0", 9, "completed"),
                                  entry("0", 10, sizes=((512,),), site="moe.py:88 in route")])
        return waiting(rank)
    verdict = analyse_dumps(world(4, made))
    assert verdict.kind == "mismatch" and verdict.culprits == (1,)
    assert verdict.call_site == "moe.py:88 in route"
    assert "sizes [512] Float where the others have [1024] Float" in verdict.summary


def test_a_mismatch_in_operation_and_in_dtype() -> None:
    def op_odd(rank: int) -> RankDump:
        if rank == 3:
            return dump(3, ALL4, [entry("0", 10, op="nccl:all_gather")])
        return waiting(rank)
    verdict = analyse_dumps(world(4, op_odd))
    assert verdict.culprits == (3,) and "operation nccl:all_gather" in verdict.summary

    def dtype_odd(rank: int) -> RankDump:
        if rank == 0:
            return dump(0, ALL4, [entry("0", 10, dtype="BFloat16")])
        return waiting(rank)
    verdict = analyse_dumps(world(4, dtype_odd))
    assert verdict.culprits == (0,) and "dtypes" in verdict.summary


def test_a_rank_whose_gpu_never_started_the_collective() -> None:
    def made(rank: int) -> RankDump:
        return dump(rank, ALL4, [entry("0", 10, "scheduled" if rank == 3 else "started")])
    verdict = analyse_dumps(world(4, made))
    assert verdict.kind == "state" and verdict.culprits == (3,)


def test_a_member_without_a_dump_is_blamed_only_when_all_others_agree() -> None:
    verdict = analyse_dumps(world(4, lambda r: None if r == 2 else waiting(r)))
    assert verdict.kind == "no_dump" and verdict.culprits == (2,)
    assert verdict.missing_dumps == (2,) and "rank 2 wrote no dump" in verdict.summary

    def with_missing(rank: int) -> RankDump | None:
        if rank == 2:
            return None
        if rank == 1:
            return dump(1, ALL4, [entry("0", 9, "completed")], {"0": Frontier(9, 9, 9)})
        return waiting(rank)
    verdict = analyse_dumps(world(4, with_missing))
    assert verdict.kind == "missing" and verdict.culprits == (1,)  # evidence beats absence
    assert "no dump found for rank 2" in verdict.summary


def test_many_members_without_a_dump_are_dumps_still_landing_and_blamed_on_no_one() -> None:
    group = {"0": tuple(range(64))}

    def landed_where(has_dump):
        def made(rank: int) -> RankDump | None:
            if not has_dump(rank):
                return None
            return dump(rank, group, [entry("0", 9, "completed"), entry("0", 10)])
        return made
    verdict = analyse_dumps(world(64, landed_where(lambda r: r % 3 == 0)))  # a third landed
    assert verdict.kind == "landing" and verdict.culprits == ()
    assert "42 ranks' dumps are not read yet" in verdict.summary
    few = analyse_dumps(world(64, landed_where(lambda r: r >= 8)))  # eight without one
    assert few.kind == "no_dump" and few.culprits == tuple(range(8))


def test_all_stuck_together_names_no_one() -> None:
    verdict = analyse_dumps(world(4, waiting))
    assert verdict.kind == "all_stuck" and verdict.culprits == ()
    assert "no rank stands out" in verdict.summary


def test_nothing_pending_is_no_hang_and_no_dumps_is_no_verdict() -> None:
    done = analyse_dumps(world(2, lambda r: dump(r, {"0": (0, 1)},
                                                 [entry("0", 5, "completed")])))
    assert done.kind == "clear" and done.culprits == ()
    assert analyse_dumps(DumpSet(4, {})) is None


def test_wavefront_blames_the_group_most_ranks_are_stuck_in() -> None:
    # 8 ranks: TP groups {0..3} {4..7}; DP groups {i, i+4}. Rank 5 never joined its TP
    # all-reduce (seq 7) where 4, 6, 7 wait; ranks 0..3 wait downstream in their DP
    # all-reduce (seq 3) for the TP group {4..7}.
    groups = {"tp0": (0, 1, 2, 3), "tp1": (4, 5, 6, 7),
              **{f"dp{i}": (i, i + 4) for i in range(4)}}

    def made(rank: int) -> RankDump:
        tp, dp = ("tp0" if rank < 4 else "tp1"), f"dp{rank % 4}"
        mine = {g: r for g, r in groups.items() if rank in r}
        if rank < 4:
            return dump(rank, mine, [entry(tp, 7, "completed"), entry(dp, 3)])
        if rank == 5:
            return dump(rank, mine, [entry(tp, 6, "completed"), entry(dp, 2, "completed")],
                        {tp: Frontier(6, 6, 6)})
        return dump(rank, mine, [entry(dp, 2, "completed"), entry(tp, 7)])

    verdict = analyse_dumps(world(8, made))
    assert verdict.group == "pg tp1 (desctp1)" and verdict.seq == 7
    assert verdict.culprits == (5,) and verdict.kind == "missing"
    assert len(verdict.downstream) == 4 and all("1 ranks" in d for d in verdict.downstream)


def test_point_to_point_entries_are_left_out() -> None:
    def made(rank: int) -> RankDump:
        return dump(rank, {"0": (0, 1)}, [entry("0", 4, "completed"),
                                          entry("0", 0, op="nccl:send 0->1", p2p=True)])
    assert analyse_dumps(world(2, made)).kind == "clear"


def test_members_disagreeing_on_a_group_is_noted() -> None:
    def made(rank: int) -> RankDump:
        members = (0, 1, 2, 3) if rank else (0, 1, 2)
        return dump(rank, {"0": members}, [entry("0", 10)])
    verdict = analyse_dumps(world(4, made))
    assert any("other members" in note for note in verdict.notes)


# --- dumps as PyTorch 2.14.1 wrote them (gloo, 4 ranks, rank 2 frozen or killed) ----------

REAL = Path(__file__).parents[2] / "flight" / "real_2_14"


def test_real_gloo_dumps_blame_the_member_without_one_at_the_real_frontier() -> None:
    verdict = analyse_dumps(read_dumps(str(REAL / "frozen" / "fr_"), 4))
    assert verdict.kind == "no_dump" and verdict.culprits == (2,)
    assert (verdict.seq, verdict.op, verdict.group) == (282, "gloo:all_reduce",
                                                       "pg 0 (default_pg)")
    assert verdict.group_size == 4 and verdict.waiting == (0, 1, 3)
    assert verdict.waiting_call_site == "/workspace/train.py:23 in train_step"
    assert verdict.summary.startswith("3 of 4 ranks stopped at gloo:all_reduce SeqNum 282")
    assert "rank 2 wrote no dump" in verdict.summary and "NCCL" not in verdict.summary


def test_real_gloo_dumps_of_a_death_blame_every_member_without_one() -> None:
    # Rank 2 was killed; the agent stopped rank 0 before it could dump.
    verdict = analyse_dumps(read_dumps(str(REAL / "killed" / "fr_"), 4))
    assert verdict.kind == "no_dump" and verdict.culprits == (0, 2)
    assert verdict.seq == 282 and verdict.group_size == 4


def test_real_gloo_dumps_all_at_one_collective_suspect_the_network_not_nccl(
        tmp_path: Path) -> None:
    for rank in range(4):  # every member dumped: rank 0's dump stands in for rank 2's
        shutil.copy(REAL / "frozen" / f"fr_{rank if rank != 2 else 0}", tmp_path / f"fr_{rank}")
    verdict = analyse_dumps(read_dumps(str(tmp_path / "fr_"), 4))
    assert verdict.kind == "all_stuck" and verdict.culprits == ()
    assert verdict.summary == ("all 4 of 4 ranks stopped at gloo:all_reduce SeqNum 282 of pg 0"
                               " (default_pg): no rank stands out (network or gloo's TCP"
                               " transport?)")


def test_where_a_rank_stopped_by_how_its_dump_says_completion() -> None:
    entries = [entry("0", 8, "completed"), entry("0", 9, "completed")]
    by_state = dump(0, ALL4, entries)
    assert by_state.stopped_at() is None  # its states say nothing is pending: no hang
    retired = replace(by_state, completion=BY_RETIRED)
    assert retired.stopped_at().seq == 9  # a failed collective is retired too
    pending = replace(retired, entries=(*entries, entry("0", 10, "scheduled"),
                                        entry("0", 11, "scheduled")))
    assert pending.stopped_at().seq == 10
    unsaid = replace(pending, completion=NOT_SAID)
    assert unsaid.stopped_at().seq == 11  # nothing says completion: its newest


def test_real_gloo_dumps_some_retired_some_not_at_the_same_collective_agree(
        tmp_path: Path) -> None:
    # Rank 0 dumped before its timed-out all-reduce was retired; ranks 1 and 3 after.
    shutil.copy(REAL / "frozen_race" / "fr_0", tmp_path / "fr_0")
    for rank in (1, 3):
        shutil.copy(REAL / "frozen" / f"fr_{rank}", tmp_path / f"fr_{rank}")
    verdict = analyse_dumps(read_dumps(str(tmp_path / "fr_"), 4))
    assert verdict.kind == "no_dump" and verdict.culprits == (2,)
    assert verdict.seq == 282 and verdict.waiting == (0, 1, 3)
    assert verdict.summary.startswith("3 of 4 ranks stopped at gloo:all_reduce SeqNum 282")
