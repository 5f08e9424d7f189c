"""How a rank's place is written: its host and GPU, or its local rank where no GPU data
named a GPU for it."""

from __future__ import annotations

import math

from ranktop.tui.core.model import FLOAT32_MAX, Frame, Rank, bounded


def test_a_rank_whose_gpu_data_named_its_gpu_is_placed_on_that_gpu():
    rank = Rank(rank=37, host="gpu-node-004", gpu=5, node=4)
    assert rank.place == "gpu-node-004 GPU 5"
    assert rank.title == "rank 37 (gpu-node-004 GPU 5)"


def test_without_gpu_data_a_rank_is_placed_by_its_local_rank():
    rank = Rank(rank=1, host="node-a", gpu=1, node=0, gpu_named=False)
    assert rank.place == "node-a local rank 1"
    assert rank.title == "rank 1 (node-a local rank 1)"
    assert "GPU" not in rank.place


def test_an_unknown_index_or_host_is_said_in_the_same_words():
    assert Rank(5, "?", -1, -1, inferred=True).place == "host unknown, GPU unknown, inferred"
    assert (Rank(5, "?", -1, -1, inferred=True, gpu_named=False).place
            == "host unknown, local rank unknown, inferred")


def test_a_pod_follows_the_local_rank_as_it_follows_the_gpu():
    rank = Rank(3, "node-b", 1, 1, pod="trainer-1", gpu_named=False)
    assert rank.place == "node-b local rank 1 pod trainer-1"
    assert Rank(3, "node-b", 1, 1, pod="trainer-1").place == "node-b GPU 1 pod trainer-1"


def test_a_rank_is_up_where_any_metric_has_a_value_for_it() -> None:
    nan = float("nan")
    frame = Frame(time=0.0, values={"a": [1.0, nan, nan], "b": [nan, 2.0], "c": [nan] * 3})
    assert frame.ranks_up(3) == [True, True, False]
    assert frame.ranks_up(4) == [True, True, False, False]  # a rank past every series
    assert Frame(time=0.0, values={}).ranks_up(2) == [False, False]


def test_values_past_a_32_bit_float_are_bounded_and_the_others_kept_as_they_are() -> None:
    plain = [1.0, float("nan"), -3.5, FLOAT32_MAX]
    assert bounded(plain) is plain
    huge = bounded([1.0, 1e300, -1e300, float("inf")])
    assert huge[:3] == [1.0, FLOAT32_MAX, -FLOAT32_MAX] and math.isnan(huge[3])
    # bytes that read as an infinity only across two values (00 00 | 80 7f): the same
    # values come back
    across = [0.0, 32640 * 2.0 ** -149]
    assert bounded(across) == across
