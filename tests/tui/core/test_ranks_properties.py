"""Property tests: any Slurm node list, rank-map file or job labels give a rank map, None or
a RankMapError, never another exception."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ranktop.tui.core.model import RankMap
from ranktop.tui.core.ranks import (
    RankMapError,
    expand_nodelist,
    from_dcgm,
    from_file,
    from_job_series,
    from_slurm,
)

from tests.tui.properties import FEW, NUMBERS

NODELIST = st.lists(st.one_of(st.sampled_from(["gpu-", "[", "]", ",", "-", "0", "01", "9", "n",
                                               " ", "٣", "\x00"]), NUMBERS.map(lambda s: s[:30]),
                              st.text(max_size=4)), max_size=12).map("".join)
RANK_LINE = st.lists(st.one_of(NUMBERS, st.sampled_from([",", " ", "#", "host-1", "\t", "-1",
                                                         "\ufeff", "rank,host,gpu"]),
                               st.text(max_size=6)), max_size=8).map("".join)
LABELS = st.dictionaries(st.sampled_from(["rank", "host", "gpu", "uuid", "pod", "Hostname",
                                          "gpu", "UUID"]), st.one_of(NUMBERS, st.text(max_size=8)),
                         max_size=5)


@FEW
@given(NODELIST, st.integers(1, 16))
def test_a_node_list_is_a_rank_map_or_a_rank_map_error(nodelist, gpus):
    try:
        names = expand_nodelist(nodelist, 4096)
        rank_map = from_slurm(nodelist, gpus)
    except RankMapError as error:
        assert "\n" not in str(error)
        return
    assert len(names) <= 4096 and len(rank_map) == len(names) * gpus


@FEW
@given(st.lists(RANK_LINE, max_size=6))
def test_a_rank_map_file_is_a_rank_map_or_one_line_of_error(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("ranks") / "ranks.csv"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    try:
        assert isinstance(from_file(path), RankMap)
    except RankMapError as error:
        assert "\n" not in str(error)


@FEW
@given(st.lists(LABELS, max_size=6))
def test_any_series_labels_give_a_rank_map_or_none(series):
    for found in (from_job_series(series, "rank", "host", "gpu", "uuid", "pod"),
                  from_dcgm(series)):
        assert found is None or isinstance(found, RankMap)


@pytest.mark.parametrize("digits", ["9" * 19, "1" * 5000], ids=["19 digits", "5000 digits"])
def test_a_rank_of_too_many_digits_is_no_rank(tmp_path, digits):
    assert from_job_series([{"rank": digits, "host": "h"}], "rank", "host", "gpu", "uuid") is None
    path = tmp_path / "ranks.csv"
    path.write_text(f"0,h,0\n{digits},h,1\n")
    with pytest.raises(RankMapError, match="line 2"):
        from_file(path)
