"""Parallelism: each rank's stage, replica and tensor index by the rank order, and the maps'
arrangement (replicas as columns, stages as rows, tensor-parallel ranks together)."""

from __future__ import annotations

import pytest
from ranktop.tui.core.parallelism import fit_world, parse, parse_order


def test_megatron_order_puts_tensor_ranks_side_by_side_and_stages_furthest_apart():
    p = parse("tp=2,pp=2,dp=3")
    assert p.world == 12
    assert [p.coords(r)["tp"] for r in range(4)] == [0, 1, 0, 1]
    assert [p.replica(r) for r in range(12)] == [0, 0, 1, 1, 2, 2] * 2
    assert [p.stage(r) for r in range(12)] == [0] * 6 + [1] * 6
    assert all(p.rank_of(p.coords(r)) == r for r in range(12))


def test_another_order_moves_the_axes():
    p = parse("tp=2,pp=2,dp=3", "tp-cp-ep-pp-dp")  # pipeline before data
    assert [p.stage(r) for r in range(4)] == [0, 0, 1, 1]
    assert [p.replica(r) for r in (0, 4, 8)] == [0, 1, 2]


def test_display_order_is_replica_columns_of_stage_rows_with_tensor_ranks_inside():
    p = parse("tp=2,pp=2,dp=3")
    order = p.display_order()
    assert sorted(order) == list(range(12))
    column = order[:p.stages * p.group]  # replica 0
    assert {p.replica(r) for r in column} == {0}
    assert [p.stage(r) for r in column] == [0, 0, 1, 1]
    assert [p.coords(r)["tp"] for r in column] == [0, 1, 0, 1]
    assert order[4:8] == [2, 3, 8, 9]


def test_dp_left_out_is_what_the_world_size_leaves():
    p = fit_world(parse("tp=8,pp=4"), 512)
    assert p.replicas == 16 and p.world == 512
    assert "dp from the world size" in p.describe()


@pytest.mark.parametrize(("text", "world", "says"), [
    ("tp=8,pp=4,dp=16", 256, "tp=8,pp=4,dp=16 is 512 ranks but the job has 256"),
    ("tp=8,pp=3", 512, "tp=8,pp=3 (24 ranks per replica) does not divide the job's 512 ranks"),
])
def test_a_parallelism_that_is_not_the_jobs_says_why(text, world, says):
    with pytest.raises(ValueError, match=says.replace("(", r"\(").replace(")", r"\)")):
        fit_world(parse(text), world)


@pytest.mark.parametrize(("text", "says"), [
    ("tp8", "'tp8' is not axis=size"),
    ("xp=2", "'xp=2' is not axis=size"),
    ("tp=2,tp=4", "tp is given twice"),
    ("tp=0", "tp=0: the size must be a whole number"),
    ("pp=-1", "pp=-1: the size must be a whole number"),
])
def test_bad_sizes_say_which_part(text, says):
    with pytest.raises(ValueError, match=says):
        parse(text)


@pytest.mark.parametrize("order", ["tp-dp-pp", "tp-cp-ep-dp-dp", "tp-cp-ep-dp-xx"])
def test_an_order_must_name_every_axis_once(order):
    with pytest.raises(ValueError, match="must name each of tp, cp, ep, dp, pp once"):
        parse_order(order)


def test_nothing_given_is_no_parallelism():
    assert parse("  ") is None
