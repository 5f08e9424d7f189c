"""A rank keeps its identity: merging a newly learned rank map with the known one."""

from __future__ import annotations

from ranktop.tui.core import rank_merge, ranks

from tests.tui.core.test_ranks import from_job, job_series


def test_a_rank_whose_series_vanish_keeps_its_number_host_and_gpu():
    before = from_job(job_series())
    after, notice = rank_merge.merge(before, from_job(job_series(skip={5})))
    assert after is before and notice == ""
    last = from_job(job_series(skip={7}))  # the last rank vanishing must not shrink the map
    assert rank_merge.merge(before, last)[0] is before


def test_the_map_grows_with_new_ranks_and_keeps_the_old_ones():
    small = from_job(job_series(n_hosts=1))
    grown, _ = rank_merge.merge(small, from_job(job_series(n_hosts=2, skip={0, 1})))
    assert len(grown) == 8
    assert grown.ranks[0] == small.ranks[0] and grown.ranks[6].host == "host1"
    assert grown.hosts == ("host0", "host1")


def test_a_better_source_replaces_the_map_with_a_notice_a_worse_one_is_ignored():
    guessed = ranks.from_dcgm([{"Hostname": "host0", "gpu": str(g)} for g in range(4)])
    learned, notice = rank_merge.merge(guessed, from_job(job_series(n_hosts=1)))
    assert learned.source == ranks.FROM_JOB and "ranks now from job metric labels" in notice
    assert rank_merge.merge(learned, guessed) == (learned, "")


def test_guessed_ranks_never_renumber_when_a_host_vanishes_or_one_appears():
    def dcgm(hosts):
        return ranks.from_dcgm([{"Hostname": h, "gpu": str(g)} for h in hosts for g in range(2)])

    first = dcgm(["b", "c"])
    without_b, _ = rank_merge.merge(first, dcgm(["c"]))  # b's series vanish
    assert without_b is first
    with_a, _ = rank_merge.merge(first, dcgm(["a", "b", "c"]))  # "a" sorts first, but comes last
    assert [(r.rank, r.host, r.gpu) for r in with_a.ranks] == [
        (0, "b", 0), (1, "b", 1), (2, "c", 0), (3, "c", 1), (4, "a", 0), (5, "a", 1)]
    assert with_a.ranks[4].node == 2


def test_a_rank_keeps_its_pod_when_its_node_number_moves():
    old = ranks.from_job_series([{"rank": "1", "local_rank": "0", "hostname": "b", "pod": "p1"}],
                                "rank", "hostname", "local_rank", "gpu_uuid", pod_label="pod")
    new = ranks.from_job_series([{"rank": "0", "local_rank": "0", "hostname": "a", "pod": "p0"}],
                                "rank", "hostname", "local_rank", "gpu_uuid", pod_label="pod")
    merged, _ = rank_merge.merge(old, new)
    assert [r.pod for r in merged.ranks] == ["p0", "p1"]
