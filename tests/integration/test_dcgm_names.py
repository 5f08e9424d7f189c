"""DCGM 4.6's field names read beside the old ones, whichever a node's exporter answers
with: a real Prometheus scraping a fixture in dcgm-exporter's format, one node under the
legacy names and one under the canonical names of go-dcgm's DCGM 4.6 support (the recovery
action under older go-dcgm's name), XIDs blank until the first."""

from __future__ import annotations

import pytest

from tests.integration.cluster import HERE, file_polled_once

JOB = "dcgm46"


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    with file_polled_once(tmp_path_factory.mktemp("dcgm46"), HERE / "dcgm-4.6.prom", JOB,
                          "count(DCGM_FI_DEV_GPU_TEMP_CELSIUS)", 4) as polled:
        yield polled


def test_each_gauge_is_read_under_either_name(frame):
    assert frame.values["temperature"] == [60.0, 61.0, 62.0, 63.0, 70.0, 71.0, 72.0, 73.0]
    assert frame.values["power"][4] == 500.5 and frame.values["power"][0] == 400.5
    # SM_UTIL_RATIO is SM_ACTIVE's field (1002) renamed: the same ratio, shown in %
    assert [round(v) for v in frame.values["sm_active"]] == [50, 60, 70, 80] * 2
    assert frame.shows["sm_active"] == "SM active"


def test_xid_and_the_recovery_action_under_their_new_names(frame):
    xid = frame.values["xid"]
    assert xid[6] == 79.0
    assert all(v != v for r, v in enumerate(xid) if r != 6)  # blank: no data, not 0
    assert frame.values["recovery_action"] == [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0]


def test_the_error_counters_under_their_new_names(frame):
    assert frame.values["remapped_rows"] == [0.0] * 7 + [1.0]
    assert frame.values["pcie_replay"][5] == 7.0
    assert frame.values["nvlink_errors"] == [0.0, 1.0, 2.0, 3.0, 250.0, 251.0, 252.0, 253.0]
    assert frame.values["row_remap_failure"] == [0.0] * 8
