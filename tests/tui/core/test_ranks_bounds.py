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
    assert "1 rank(s) numbered past" in rank_map.source
    assert rank_merge.trust(rank_map) == rank_merge.trust(learn(series(0)))  # still from job labels


def test_gaps_of_ranks_that_died_early_are_still_kept():
    rank_map = learn(series(*range(0, 64, 2)))  # half the ranks gone before anyone looked
    assert len(rank_map) == 63 and "left out" not in rank_map.source


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
    assert len(rank_map) == 2 and "left out" in rank_map.source


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
