"""How a rank's place is written: its host and GPU, or its local rank where no GPU data
named a GPU for it."""

from __future__ import annotations

from ranktop.tui.core.model import Rank


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
