"""Which rank wrote a line of a shared log: srun, torchrun, PyTorch and NCCL labels."""

from __future__ import annotations

import pytest
from ranktop.tui.core.model import Rank, RankMap
from ranktop.tui.logs.split import FileRanks, RankIndex, local_rank

HOSTS = ["gpu-node-000.cluster.local", "gpu-node-001.cluster.local"]
GRID = RankMap.grid(HOSTS, 4, source="test")  # ranks 0-3 on node 0, 4-7 on node 1
EVERYONE = range(8)
WATCHDOG = ("[E1122 03:04:05.123456789 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg)"
            " Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8812, ...)")

OLD_TIMEOUT = ("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE,"
               " Timeout(ms)=1800000) ran for 1800042 milliseconds before timing out.")


def ranks_of(owners=EVERYONE, rank_map: RankMap = GRID) -> FileRanks:
    return FileRanks(RankIndex(rank_map), owners)


def nccl(host: str, pid: int, dev: int, message: str = "NCCL INFO Channel 00/0 : 6[2] -> 7[3]"
         ) -> str:
    return f"{host}:{pid}:{pid + 7} [{dev}] {message}"


def init(host: str, pid: int, rank: int, dev: int, nranks: int = 8) -> str:
    return nccl(host, pid, dev, f"NCCL INFO ncclCommInitRankConfig comm 0x55d8c8a0e1f0 rank"
                f" {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} busId 9b000 commId 0x1"
                " - Init COMPLETE")


@pytest.mark.parametrize("line, rank", [
    ("6: step 120 loss 2.1", 6),  # srun -l
    ("006: step 120 loss 2.1", 6),  # srun -l, zero-padded
    (f"6: [rank6]:{WATCHDOG}", 6),
    (f"[rank6]:{WATCHDOG}", 6),  # PyTorch's own prefix
    (f"[rank6]: {WATCHDOG}", 6),  # TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE="[rank${rank}]: "
    ("[default0]:[rank5]:[E1122 ...] x", 5),  # the global rank wins over the local one
    ("1: [default2]:step 120 loss 2.1", 6),  # srun task = node 1, torchrun local rank 2
    ("0: [trainer3]:step 120 loss 2.1", 3),
    (nccl("gpu-node-001", 4242, 2), 6),  # NCCL: short host, cudaDev = local rank
    ("[2026-01-02 03:04:05] " + nccl("gpu-node-001", 4242, 2, "enqueue.cc:1556 NCCL WARN x"), 6),
    ("[default2]:" + nccl("gpu-node-000", 4242, 2), 2),
    # PyTorch <= 2.1 writes no [rankN]: prefix: its rank label is inside its own header
    (f"[E ProcessGroupNCCL.cpp:737] [Rank 6] {OLD_TIMEOUT}", 6),
    (f"[E1122 03:04:05.123456789 ProcessGroupNCCL.cpp:632] [Rank 5] {OLD_TIMEOUT}", 5),
    ("[I ProcessGroupNCCL.cpp:835] [Rank 3] ProcessGroupNCCL initialized with options", 3),
    (f"  what():  [Rank 6] {OLD_TIMEOUT}", 6),
    ("[default1]:[E ProcessGroupNCCL.cpp:737] [Rank 6] x", 6),
    ("[E ProcessGroupNCCL.cpp:737] [PG 0 Rank 7] x", 7),  # the default group: the global rank
    ("[E ProcessGroupNCCL.cpp:737] [PG ID 0 PG GUID 0(default_pg) Rank 2] x", 2),
])
def test_each_label_names_its_rank(line: str, rank: int) -> None:
    assert ranks_of().rank_of(line.encode()) == rank


@pytest.mark.parametrize("line", [
    "step 120 loss 2.1",
    "",
    "Traceback (most recent call last):",
    "[default2]:step 120",  # a local rank, and the file spans two nodes
    nccl("gpu-node-009", 4242, 2),  # a host not in the job
    "12: step 120",  # a rank not in the job
    "2026-01-02 03:04:05,123 INFO step 120",
    # a sub-group's rank is no global rank
    "[E ProcessGroupNCCL.cpp:737] [PG 1 Rank 2] x",
    "[E ProcessGroupNCCL.cpp:737] [PG ID 3 PG GUID 5 Rank 2] x",
    f"RuntimeError: Some text [Rank 6] {OLD_TIMEOUT}",  # a label only where PyTorch puts it
])
def test_lines_that_name_no_rank_of_the_file(line: str) -> None:
    assert ranks_of().rank_of(line.encode()) is None


def test_a_local_rank_belongs_to_the_node_of_the_file() -> None:
    node_one = ranks_of(owners=range(4, 8))
    assert node_one.rank_of(b"[default2]:step 120") == 6
    assert node_one.rank_of(b"[default2]:" + nccl("gpu-node-000", 1, 2).encode()) == 6


def test_a_rank_that_does_not_share_the_file_is_not_given_its_lines() -> None:
    assert ranks_of(owners=[0, 1]).rank_of(b"6: step 120") is None


def test_the_init_line_ties_a_pid_to_its_rank() -> None:
    ranks = ranks_of()
    ranks.learn(init("gpu-node-001", 999, rank=7, dev=3).encode())
    assert ranks.rank_of(nccl("gpu-node-001", 999, 3).encode()) == 7
    ranks.learn(init("gpu-node-000", 555, rank=1, dev=1, nranks=2).encode())  # a sub-group
    assert ranks.rank_of(nccl("gpu-node-000", 555, 0).encode()) == 0


def test_cuda_dev_is_not_the_local_rank_when_each_process_sees_one_gpu() -> None:
    ranks = ranks_of()
    ranks.learn("\n".join([init("gpu-node-001", 700 + d, rank=4 + d, dev=0)
                           for d in range(4)]).encode())
    assert ranks.rank_of(nccl("gpu-node-001", 702, 0).encode()) == 6
    assert ranks.rank_of(nccl("gpu-node-001", 888, 0).encode()) is None  # unknown pid


def test_short_host_names_that_clash_name_no_rank() -> None:
    clash = RankMap(ranks=(Rank(0, "a.dc1", 0, 0), Rank(1, "a.dc2", 0, 1)),
                    hosts=("a.dc1", "a.dc2"), gpus_per_node=1, source="test")
    ranks = ranks_of(owners=[0, 1], rank_map=clash)
    assert ranks.rank_of(nccl("a", 1, 0).encode()) is None
    assert ranks.rank_of(nccl("a.dc2", 1, 0).encode()) == 1


def test_local_rank_is_the_gpu_else_the_position_on_the_node() -> None:
    assert [local_rank(GRID, r) for r in EVERYONE] == [0, 1, 2, 3, 0, 1, 2, 3]
    unknown = RankMap(ranks=tuple(Rank(r, "h", -1, 0) for r in range(4)), hosts=("h",),
                      gpus_per_node=2, source="test")
    assert [local_rank(unknown, r) for r in range(4)] == [0, 1, 0, 1]
