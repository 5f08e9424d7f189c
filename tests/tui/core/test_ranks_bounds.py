"""The rank map is bounded by the ranks the job shows, never by the largest number a label,
a file line or a node list holds; host names from files are plain text."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from ranktop.tui.core import rank_merge, ranks
from ranktop.tui.core.ranks import MAX_RANKS, RankMapError


def series(*numbers: int) -> list[dict[str, str]]:
    return [{"rank": str(n), "hostname": f"node-{n // 8}", "gpu": str(n % 8)} for n in numbers]


def learn(labels):
    return ranks.from_job_series(labels, "rank", "hostname", "gpu", "uuid")


def test_one_huge_rank_label_is_left_out_and_said():
    rank_map = learn(series(*range(8), 10_000_000))
    assert len(rank_map) == 8
    assert "1 rank(s) numbered past" in rank_map.left_out
    assert rank_merge.trust(rank_map) == rank_merge.trust(learn(series(0)))  # still from job labels


def test_gaps_of_ranks_that_died_early_are_still_kept():
    rank_map = learn(series(*range(0, 64, 2)))  # half the ranks gone before anyone looked
    assert len(rank_map) == 63 and not rank_map.left_out


def test_only_huge_rank_labels_give_no_rank_map():
    assert learn(series(10_000_000)) is None


def test_a_rank_map_file_with_a_rank_of_a_billion_is_refused(tmp_path):
    path = tmp_path / "ranks.csv"
    path.write_text("0,a,0\n1000000000,b,0\n")
    with pytest.raises(RankMapError, match="line 2: rank 1000000000 is past the most"):
        ranks.from_file(path)


def test_a_file_line_past_the_ceiling_is_left_out(tmp_path):
    path = tmp_path / "ranks.csv"
    path.write_text("0,a,0\n1,a,1\n200000,b,0\n")
    rank_map = ranks.from_file(path)
    assert len(rank_map) == 2 and "left out" in rank_map.left_out


def test_host_names_from_a_file_are_plain(tmp_path):
    path = tmp_path / "ranks.csv"
    path.write_text("0,gpu\x1b]52;c;eA==\x07[@click=app.quit],0\n")
    [rank] = ranks.from_file(path).ranks
    assert "\x1b" not in rank.host and "\x07" not in rank.host
    assert rank.host.endswith("[@click=app.quit]")  # kept as text: the screens never parse it


def test_a_fifo_or_device_as_rank_map_is_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    errors: list[str] = []

    def read() -> None:
        with pytest.raises(RankMapError) as caught:
            ranks.from_file(fifo)
        errors.append(str(caught.value))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():
        with open(fifo, "w"):
            pass
        pytest.fail("reading a FIFO as the rank map blocked")
    assert "not a regular file" in errors[0]
    with pytest.raises(RankMapError, match="not a regular file"):
        ranks.from_file(Path("/dev/zero"))


@pytest.mark.parametrize("nodelist", ["gpu-[0-99999999]", "a-[0-9999],b-[0-99999]",
                                      "gpu-[0-999]-[0-999]", "gpu-[0-99999999999999999999]"])
def test_a_node_list_of_millions_is_refused_before_it_is_expanded(nodelist):
    with pytest.raises(RankMapError, match=r"more than|cannot read range"):
        ranks.from_slurm(nodelist, 8)


def test_the_largest_node_list_allowed_still_expands():
    hosts = ranks.expand_nodelist(f"n[1-{MAX_RANKS // 8}]", MAX_RANKS // 8)
    assert len(hosts) == MAX_RANKS // 8


@pytest.mark.parametrize("written", ["05", " 5", "5 ", "+5", "\u0665", "\uff15", "\u1815",
                                     "\U0001d7d3", "5.0", ""])
def test_only_a_plain_ascii_number_is_a_rank(written):
    labels = series(*range(8))
    labels.append({"rank": written, "hostname": "intruder", "gpu": "0"})
    rank_map = learn(labels)
    assert rank_map.ranks[5].host == "node-0"  # not replaced by the intruder
    assert "intruder" not in rank_map.hosts
    assert "1 series with a rank label that is not a plain number left out" in rank_map.left_out
    assert ranks.DcgmJoin(rank_map, "rank").rank_of({"rank": written}) is None


def test_a_rank_named_twice_keeps_the_first_and_says_which():
    labels = series(*range(8))
    labels += [{"rank": "5", "hostname": "other", "gpu": "1"},
               {"rank": "6", "hostname": "node-0", "gpu": "6"}]  # the same place again: fine
    rank_map = learn(labels)
    assert rank_map.ranks[5].host == "node-0" and "other" not in rank_map.hosts
    assert rank_map.left_out == ("rank 5 named by series on different hosts or GPUs: "
                                 "the first kept")


def test_a_rank_far_past_the_known_world_size_is_left_out_however_many_name_one():
    known = learn(series(*range(1000)))
    flood = ranks.from_job_series(series(*range(101_000)), "rank", "hostname", "gpu", "uuid",
                                  known=len(known))
    merged, _ = rank_merge.merge(known, flood)
    assert len(merged) == ranks.rank_ceiling(1000) < 3000
    assert f"{101_000 - ranks.rank_ceiling(1000)} rank(s) numbered past" in merged.left_out
    calm, _ = rank_merge.merge(merged, learn(series(*range(1000))))
    assert calm.left_out == ""  # said while the labels say it
