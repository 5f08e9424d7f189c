"""Rank maps from each source in the chain, and joining DCGM series to ranks."""

from __future__ import annotations

import pytest
from ranktop.tui.core import ranks
from ranktop.tui.core.model import RankMap
from ranktop.tui.core.ranks import DcgmJoin, RankMapError


def job_series(n_hosts=2, gpus=4, skip=()):
    return [
        {"rank": str(h * gpus + g), "hostname": f"host{h}", "local_rank": str(g),
         "gpu_uuid": f"GPU-{h}-{g}", "training_job": "j"}
        for h in range(n_hosts) for g in range(gpus) if h * gpus + g not in skip
    ]


def from_job(series):
    return ranks.from_job_series(series, "rank", "hostname", "local_rank", "gpu_uuid")


def test_job_labels_name_every_rank_with_host_gpu_and_uuid():
    rank_map = from_job(job_series())
    assert len(rank_map) == 8
    assert rank_map.source == ranks.FROM_JOB
    assert rank_map.ranks[5].host == "host1" and rank_map.ranks[5].gpu == 1
    assert rank_map.ranks[5].uuid == "GPU-1-1"
    assert rank_map.hosts == ("host0", "host1")
    assert rank_map.gpus_per_node == 4


def test_a_gap_in_the_rank_labels_is_inferred_from_its_neighbours_and_said_so():
    rank_map = from_job(job_series(skip={2}))
    assert len(rank_map) == 8
    gap = rank_map.ranks[2]
    assert (gap.host, gap.gpu, gap.node, gap.inferred) == ("host0", 2, 0, True)
    assert gap.place == "host0 GPU 2, inferred"
    assert not rank_map.ranks[3].inferred


def test_a_gap_whose_neighbours_disagree_stays_on_an_unknown_host():
    series = job_series(skip={2})
    series[2]["local_rank"] = "1"  # rank 3 claims GPU 1: no room for rank 2 between them
    gap = from_job(series).ranks[2]
    assert (gap.host, gap.gpu, gap.inferred) == ("?", -1, True)
    assert gap.place == "host unknown, GPU unknown, inferred"


def test_series_without_rank_labels_give_no_map():
    assert from_job([{"hostname": "a"}, {"rank": "x"}]) is None


def test_rank_map_file(tmp_path):
    path = tmp_path / "ranks.csv"
    path.write_text("rank,host,gpu\n# comment\n0,a,0\n1 a 1\n2,b,0 # trailing\n3,b,1\n")
    rank_map = ranks.from_file(path)
    assert [(r.host, r.gpu) for r in rank_map.ranks] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert rank_map.source.startswith(ranks.FROM_FILE)


@pytest.mark.parametrize("text,words", [
    ("0,a\n", "line 1"),
    ("0,a,0\n0,b,1\n", "rank 0 appears twice"),
    ("# nothing\n", "no ranks"),
    ("0,a,zero\n", "line 1"),
])
def test_bad_rank_map_files_name_the_line(tmp_path, text, words):
    path = tmp_path / "ranks.csv"
    path.write_text(text)
    with pytest.raises(RankMapError, match=words):
        ranks.from_file(path)


def test_slurm_node_lists_expand_like_slurm():
    assert ranks.expand_nodelist("gpu-[001-003,007],login1") == [
        "gpu-001", "gpu-002", "gpu-003", "gpu-007", "login1"]
    assert ranks.expand_nodelist("r[1-2]-n[08-09]") == ["r1-n08", "r1-n09", "r2-n08", "r2-n09"]
    assert ranks.expand_nodelist("solo") == ["solo"]
    with pytest.raises(RankMapError):
        ranks.expand_nodelist("gpu-[a-b]")


def test_slurm_order_is_torchruns_default():
    rank_map = ranks.from_slurm("n[0-1]", 4)
    assert [(r.host, r.gpu) for r in rank_map.ranks][3:5] == [("n0", 3), ("n1", 0)]
    assert rank_map.source == ranks.FROM_SLURM


def test_dcgm_order_is_the_last_resort_and_says_so():
    series = [{"Hostname": "b", "gpu": "1"}, {"Hostname": "a", "gpu": "0"},
              {"hostname": "b", "gpu": "0"}, {"Hostname": "a", "gpu": "1"}]
    rank_map = ranks.from_dcgm(series)
    assert [(r.host, r.gpu) for r in rank_map.ranks] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert "guessed" in rank_map.source


def test_dcgm_series_join_by_uuid_first_then_host_and_gpu():
    join = DcgmJoin(from_job(job_series()))
    # a container renumbered the GPU: the UUID still finds rank 5
    assert join.rank_of({"UUID": "GPU-1-1", "gpu": "0", "Hostname": "host1"}) == 5
    assert join.rank_of({"uuid": "GPU-0-2"}) == 2  # --use-old-namespace
    # another job's GPU on one of our hosts is not ours, whatever its index
    assert join.rank_of({"UUID": "GPU-other", "gpu": "1", "Hostname": "host1"}) is None


def test_without_uuids_dcgm_series_join_by_host_or_pod_and_gpu():
    series = [{k: v for k, v in labels.items() if k != "gpu_uuid"} for labels in job_series()]
    join = DcgmJoin(from_job(series))
    assert join.rank_of({"UUID": "GPU-x", "hostname": "host1", "gpu": "3"}) == 7
    assert join.rank_of({"exported_pod": "host0", "gpu": "1"}) == 1  # Kubernetes pod names
    assert join.rank_of({"Hostname": "elsewhere", "gpu": "0"}) is None


def test_a_series_with_a_rank_label_is_that_rank_when_the_map_has_it():
    join = DcgmJoin(from_job(job_series()), "rank")
    assert join.rank_of({"rank": "6", "UUID": "GPU-0-0"}) == 6  # its own rank first
    assert join.rank_of({"rank": "007"}) is None  # not how a rank is written
    assert join.rank_of({"rank": "8"}) is None  # past the map
    assert join.rank_of({"rank": "x", "UUID": "GPU-1-0"}) == 4  # no number: joined by GPU


def test_a_gpu_index_written_otherwise_still_joins():
    series = [{k: v for k, v in labels.items() if k != "gpu_uuid"} for labels in job_series()]
    join = DcgmJoin(from_job(series))
    assert join.rank_of({"Hostname": "host1", "gpu": "03"}) == 7
    assert join.rank_of({"Hostname": "host1", "gpu": " 2"}) == 6
    assert join.rank_of({"Hostname": "host1"}) is None


def test_the_join_asks_for_the_labels_it_reads():
    by_uuid = DcgmJoin(from_job(job_series()))
    assert by_uuid.labels == ("UUID", "uuid")
    series = [{k: v for k, v in labels.items() if k != "gpu_uuid"} for labels in job_series()]
    by_place = DcgmJoin(from_job(series))
    assert set(by_place.labels) == {"gpu", "Hostname", "hostname", "exported_pod", "pod"}
    nothing_yet = DcgmJoin(RankMap(ranks=(), hosts=(), gpus_per_node=1, source=""))
    assert set(nothing_yet.labels) == {*by_uuid.labels, *by_place.labels}


# -- Kubernetes: the job's series name their pod; DCGM names the pod's node --------------

K8S_DCGM = [{"Hostname": f"gpu-node-00{n}", "gpu": str(g), "exported_pod": f"llama-worker-{n}",
             "pod": f"nvidia-dcgm-exporter-{n}x"} for n in range(2) for g in range(2)]


def test_a_pod_only_job_series_runs_on_the_node_dcgm_names():
    series = [{"rank": str(r), "local_rank": str(r % 2), "pod": f"llama-worker-{r // 2}"}
              for r in range(4)]
    nodes = ranks.nodes_of_pods(K8S_DCGM)
    assert nodes["llama-worker-1"] == "gpu-node-001"
    found = ranks.from_job_series(series, "rank", "hostname", "local_rank", "gpu_uuid",
                                  pod_label="pod", node_of_pod=nodes)
    third = found.ranks[3]
    assert (third.host, third.gpu, third.pod) == ("gpu-node-001", 1, "llama-worker-1")
    assert third.place == "gpu-node-001 GPU 1 pod llama-worker-1"
    join = ranks.DcgmJoin(found)
    assert [join.rank_of(labels) for labels in K8S_DCGM] == [0, 1, 2, 3]


def test_without_dcgm_a_pod_only_rank_is_placed_by_its_pod():
    series = [{"rank": "0", "local_rank": "0", "pod": "llama-worker-0"}]
    found = ranks.from_job_series(series, "rank", "hostname", "local_rank", "gpu_uuid",
                                  pod_label="pod")
    assert (found.ranks[0].host, found.ranks[0].place) == ("llama-worker-0", "llama-worker-0 GPU 0")
    # DCGM's series join by the pod when their host is the node
    assert ranks.DcgmJoin(found).rank_of(K8S_DCGM[0]) == 0
