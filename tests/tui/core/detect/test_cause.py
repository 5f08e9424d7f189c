"""What goes with a slow rank: only the signs that stand out against the job's median."""

from __future__ import annotations

import math

from ranktop.tui.core.detect.cause import causes, said
from ranktop.tui.core.detect.hardware import COUNTERS, LedgerEntry
from ranktop.tui.core.model import Frame

N = 16


def frame(**changes) -> Frame:
    values = {
        "sm_clock": [1980.0] * N, "throttle_reasons": [0.0] * N, "temperature": [62.0] * N,
        "power": [640.0] * N, "nvlink": [300e9] * N,
    }
    for metric, per_rank in changes.items():
        values.setdefault(metric, [0.0] * N)
        for rank, value in per_rank.items():
            values[metric][rank] = value
    return Frame(time=0.0, values=values, job={})


def test_a_calm_rank_has_nothing_to_say():
    assert causes(frame(), 3) == []
    assert said([]) == "nothing on its GPU or links"


def test_a_throttled_hot_gpu_says_clock_reasons_temperature_and_power():
    found = causes(frame(sm_clock={3: 1400.0}, throttle_reasons={3: 0x20 | 0x40 | 0x01},
                         temperature={3: 88.0}, power={3: 520.0}), 3)
    assert found == ["clock 1400/1980 MHz", "throttle: SW thermal, HW thermal",
                     "88 °C (med 62)", "power 520/640 W"]


def test_benign_throttle_reasons_and_small_differences_are_not_causes():
    assert causes(frame(throttle_reasons={3: 0x001 | 0x010}, sm_clock={3: 1900.0},
                        temperature={3: 66.0}, power={3: 600.0}), 3) == []


def test_links_counters_and_infiniband_errors_where_exported():
    crc = next(c for c in COUNTERS if c.metric == "nvlink_errors")
    ledger = (LedgerEntry(crc, 2000.0, 1725.0),)
    found = causes(frame(nvlink={3: 60e9}, ib_errors={3: 120.0}), 3, ledger)
    assert found == ["NVLink 60/300 GB/s", "+1725 NVLink CRC error(s)", "+120 InfiniBand errors"]
    assert causes(frame(ib_errors={3: math.nan}), 3) == []
