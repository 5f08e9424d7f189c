"""What hot cells form on the maps (a GPU, a stage, a replica or node, scattered) and whether
the hot spot stays or wanders."""

from __future__ import annotations

from ranktop.tui.core.detect.hotspots import STEADY_POLLS, Grid, Wander
from ranktop.tui.core.model import RankMap
from ranktop.tui.core.parallelism import parse

RANK_MAP = RankMap.grid([f"h{i}" for i in range(8)], 8, "test")  # 64 ranks
PARALLEL = Grid(RANK_MAP, parse("tp=4,pp=4,dp=4"))
BY_NODE = Grid(RANK_MAP)
P = parse("tp=4,pp=4,dp=4")


def stage(s: int) -> list[int]:
    return [r for r in range(64) if P.stage(r) == s]


def replica(d: int) -> list[int]:
    return [r for r in range(64) if P.replica(r) == d]


def test_one_hot_rank_is_one_bad_worker():
    (shape,) = PARALLEL.shapes({37})
    assert (shape.kind, shape.anchor) == ("cell", 37)
    assert shape.says(PARALLEL) == ("one GPU", "a bad worker")


def test_a_hot_stage_is_a_row_placed_on_its_first_rank():
    (shape,) = PARALLEL.shapes(stage(3))
    assert (shape.kind, shape.index, shape.anchor) == ("row", 3, min(stage(3)))
    assert shape.says(PARALLEL) == ("stage 3 of 4: 16 ranks", "an imbalanced pipeline stage")


def test_a_hot_replica_is_a_column_often_a_node_or_link():
    (shape,) = PARALLEL.shapes(replica(2)[::2])  # half of it is enough
    assert (shape.kind, shape.index, shape.anchor) == ("column", 2, min(replica(2)))
    assert shape.says(PARALLEL)[1] == "often one node or link"
    assert [s.kind for s in PARALLEL.shapes(replica(2)[:7])] == ["scattered"]  # under half


def test_a_stray_hot_rank_does_not_hide_a_hot_row():
    stray = next(r for r in stage(0) if P.replica(r) == 1)
    found = PARALLEL.shapes({*stage(3)[1:], stray})
    assert [(s.kind, s.ranks) for s in found] == [("row", tuple(stage(3)[1:])),
                                                   ("cell", (stray,))]


def test_hot_ranks_in_different_stages_and_replicas_are_scattered():
    (shape,) = PARALLEL.shapes({0, 63})
    assert shape.kind == "scattered" and shape.says(PARALLEL)[0] == "one of 2 slow GPUs"


def test_without_parallelism_a_column_is_one_node_half_of_it_hot_or_more():
    (shape,) = BY_NODE.shapes({17, 20, 21, 22})
    assert (shape.kind, shape.index, shape.anchor) == ("column", 2, 16)
    assert shape.says(BY_NODE) == ("node 2: 4 ranks", "one node")
    assert [s.kind for s in BY_NODE.shapes({3, 20})] == ["scattered"]
    assert BY_NODE.shapes(set()) == []


def test_a_rank_hot_poll_after_poll_stays_and_nothing_wanders():
    wander = Wander()
    for t in range(STEADY_POLLS + 2):
        wander.update(2.0 * t, {9})
    assert wander.steady == {9} and not wander.wandering


def test_a_hot_rank_that_changes_every_poll_wanders_and_none_stays():
    wander = Wander()
    for t in range(6):
        wander.update(2.0 * t, {t * 7})
    assert wander.wandering and wander.steady == frozenset()
    assert wander.passing() == {0, 7, 14, 21, 28}  # 35 is hot now: it may yet stay


def test_hiccups_now_and_then_are_no_wander():
    wander = Wander()
    for t in range(15):
        wander.update(2.0 * t, {t} if t % 3 == 0 else ())  # five ranks pass, one poll in three
    assert len(wander.passing()) >= 4 and not wander.wandering


def test_a_wander_ends_a_few_polls_after_the_last_passing_hot_rank():
    wander = Wander()
    for t in range(6):
        wander.update(2.0 * t, {t * 7})
    for t in range(6, 6 + STEADY_POLLS):
        assert wander.wandering
        wander.update(2.0 * t, ())
    assert not wander.wandering and wander.passing()  # remembered, but no longer moving


def test_a_rank_that_stays_hot_does_not_keep_a_past_wander_going():
    wander = Wander()
    for t in range(6):
        wander.update(2.0 * t, {9, 10 + t})  # 9 stays; five others pass
    assert wander.wandering
    for t in range(6, 6 + STEADY_POLLS):
        wander.update(2.0 * t, {9})
    assert not wander.wandering and 9 in wander.steady
