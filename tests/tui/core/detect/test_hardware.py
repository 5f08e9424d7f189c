"""The hardware-error ledger: counters judged by their rise, never by their total."""

from __future__ import annotations

import math

from ranktop.tui.core.config_values import DetectSettings
from ranktop.tui.core.detect.detectors import Detectors
from ranktop.tui.core.detect.hardware import WINDOW_SECONDS, Ledger, ledger_lines
from ranktop.tui.core.detect.lookback import Lookback
from ranktop.tui.core.model import Frame, RankMap

N = 8


def counters(t: float, **changes: dict[int, float]) -> Frame:
    values = {
        "remapped_rows": [0.0] * N,
        "row_remap_failure": [0.0] * N,
        "pcie_replay": [12.0 if r == 3 else 0.0 for r in range(N)],  # old, never moving
        "nvlink_errors": [0.0] * N,
    }
    for metric, per_rank in changes.items():
        for rank, value in per_rank.items():
            values[metric][rank] = value
    return Frame(time=t, values=values)


def test_an_old_total_that_does_not_move_is_not_an_incident_but_is_on_the_ledger():
    ledger = Ledger()
    for t in range(0, 120, 2):
        assert ledger.update(counters(t)) == []
    assert ledger_lines(ledger.entries, 3) == ["PCIe replay(s) 12, none new"]


def test_one_more_remapped_row_is_a_critical_memory_fault_at_once_for_the_window():
    ledger = Ledger()
    ledger.update(counters(0))
    found = ledger.update(counters(2, remapped_rows={5: 1.0}))
    assert [(a.kind, a.severity, a.rank, a.confirmed) for a in found] == [
        ("memory", "critical", 5, True)]
    assert found[0].summary == ("row(s) remapped +1 in the last 10 min (1 in all): "
                                "an uncorrectable memory error")
    later = [ledger.update(counters(t, remapped_rows={5: 1.0}))
             for t in range(4, int(WINDOW_SECONDS) + 80, 2)]
    assert later[0] and later[0][0].since == 2  # it keeps its start
    assert later[-1] == []  # quiet for a whole window: no longer news


def test_a_remap_failure_flag_and_rising_nvlink_and_pcie_errors_each_say_what_they_mean():
    ledger = Ledger()
    ledger.update(counters(0))
    found = ledger.update(counters(2, row_remap_failure={1: 1.0}, nvlink_errors={2: 400.0},
                                   pcie_replay={3: 22.0}))
    by_kind = {a.kind: a for a in found}
    assert by_kind["remap_failure"].severity == "critical"
    assert "drain it for a reset or RMA" in by_kind["remap_failure"].summary
    assert by_kind["nvlink_errors"].summary.startswith("NVLink CRC error(s) +400")
    assert by_kind["pcie"].summary.startswith("PCIe replay(s) +10 in the last 10 min (22 in all)")


def test_a_few_link_errors_are_on_the_ledger_but_raise_nothing():
    ledger = Ledger()
    ledger.update(counters(0))
    assert ledger.update(counters(2, nvlink_errors={2: 40.0}, pcie_replay={3: 15.0})) == []
    assert ledger_lines(ledger.entries, 2)[0].startswith("NVLink CRC error(s) +40 in the last")


def test_a_counter_reset_counts_its_new_value_and_a_missing_value_is_no_data():
    ledger = Ledger()
    ledger.update(counters(0, nvlink_errors={2: 500.0}))
    found = ledger.update(counters(2, nvlink_errors={2: 300.0}, remapped_rows={4: math.nan}))
    assert [(a.kind, a.rank) for a in found] == [("nvlink_errors", 2)]
    assert "+300 in the last" in found[0].summary


def test_a_rank_back_from_the_dead_does_not_count_its_old_total_as_a_rise():
    ledger = Ledger()
    raised = []
    for t in range(0, int(WINDOW_SECONDS) * 2, 2):  # down from 20 s to 140 s, then back
        frame = counters(t, nvlink_errors={2: 500.0}, pcie_replay={2: 200.0})
        if 20 <= t < 140:
            frame = Frame(time=t, values={m: [math.nan if r == 2 else v for r, v in
                                              enumerate(vs)] for m, vs in frame.values.items()})
        raised += [(t, a.kind) for a in ledger.update(frame)]
    assert raised == []
    assert sorted(ledger_lines(ledger.entries, 2)) == ["NVLink CRC error(s) 500, none new",
                                                       "PCIe replay(s) 200, none new"]


def test_errors_that_rose_while_a_rank_was_down_count_from_when_it_came_back():
    ledger = Ledger()
    for t in range(0, int(WINDOW_SECONDS) + 22, 2):  # down at the window's start
        frame = counters(t, nvlink_errors={2: 500.0 if t < WINDOW_SECONDS + 10 else 900.0})
        if t < 40:
            frame = Frame(time=t, values={m: [math.nan if r == 2 else v for r, v in
                                              enumerate(vs)] for m, vs in frame.values.items()})
        found = ledger.update(frame)
    assert [(a.kind, a.rank) for a in found] == [("nvlink_errors", 2)]
    assert "+400 in the last" in found[0].summary


def test_a_rank_that_dies_after_a_remapped_row_is_down_with_it_named():
    grid = RankMap.grid(["h0"], N, "test")
    detectors = Detectors(DetectSettings(), grid)
    detectors.update(counters(0))
    detectors.update(counters(2, remapped_rows={6: 1.0}))
    gone = counters(4)
    values = {m: [math.nan if r == 6 else v for r, v in enumerate(vs)]
              for m, vs in gone.values.items()}
    down = {a.kind: a for a in detectors.update(Frame(time=4, values=values)) if a.rank == 6}
    assert set(down) == {"missing", "memory"}
    missing = down["missing"].summary
    assert "row(s) remapped +1" in missing and "then its series vanished" in missing
    # the remap is not over for its series vanishing: held as it was, its data missing
    assert down["memory"].since == 2 and down["memory"].unseen_since == 4


def test_a_dead_rank_is_named_with_its_worst_recent_fault_not_the_symptoms_after_it():
    grid = RankMap.grid(["h0"], N, "test")
    detectors = Detectors(DetectSettings(), grid)
    detectors.update(counters(0))
    with_xid = counters(2)
    detectors.update(Frame(time=2, values={**with_xid.values, "xid": [79.0] * N}))
    detectors.update(counters(4, pcie_replay={6: 200.0}))  # the burst that follows an XID 79
    gone = {m: [math.nan if r == 6 else v for r, v in enumerate(vs)]
            for m, vs in counters(6).values.items()}
    down = next(a for a in detectors.update(Frame(time=6, values=gone)) if a.rank == 6)
    assert down.summary.startswith("not reporting since 00:00:06 (XID 79: GPU has fallen off the"
                                   " bus (4 s before)")


def test_an_entry_stays_raised_while_its_rise_ages_out_of_the_window():
    ledger = Ledger()
    raised = {}
    for t in range(0, int(WINDOW_SECONDS) * 2, 2):  # +150 errors from 100 s to 250 s
        errors = float(min(150, max(0, t - 100)))
        ledger.update(counters(t, nvlink_errors={2: errors}))
        for entry in ledger.entries.get(2, ()):  # none before the first error
            if entry.counter.kind == "nvlink_errors":
                raised[t] = (entry.rise, entry.raised)
    ageing = [t for t, (rise, _) in raised.items() if 0 < rise < 100 and t > 250]
    assert ageing and all(raised[t][1] for t in ageing)
    assert raised[int(WINDOW_SECONDS) * 2 - 2] == (0.0, False)


def test_a_slow_rise_hovering_at_the_bar_does_not_flicker():
    ledger = Ledger()
    raised = []
    for t in range(0, 1500, 2):  # ~97-102 errors per 10 minutes: the rise saws about the bar
        found = ledger.update(counters(t, nvlink_errors={2: float(int(0.162 * t))}))
        raised.append(bool(found))
    first = raised.index(True)
    assert first > 0 and all(raised[first:])  # once past the bar it stays while rising


def test_nvlink_errors_on_several_gpus_of_a_node_are_one_anomaly_on_the_worst_naming_them():
    ledger = Ledger()
    nodes = {0: [0, 1, 2, 3], 4: [4, 5, 6, 7]}
    ledger.update(counters(0), nodes)
    found = ledger.update(counters(2, nvlink_errors={1: 150.0, 2: 900.0, 6: 300.0}), nodes)
    # On the GPU whose counter rose most, not on the node's first GPU, which had none.
    assert [(a.kind, a.rank) for a in found] == [("nvlink_errors", 2), ("nvlink_errors", 6)]
    assert found[0].summary == ("NVLink CRC error(s) on 2 GPU(s) of this node in the last 10 min:"
                                " +900 on rank 2, +150 on rank 1: a flaky NVLink")
    assert ledger_lines(ledger.entries, 1)[0].startswith("NVLink CRC error(s) +150")


def probed(t: float, values: dict[str, list[float]], unanswered: frozenset[str] = frozenset()
           ) -> Frame:
    """A frame whose GPUs all answered (their temperature is there), with only ``values`` of
    the counters: the others had no series."""
    return Frame(time=t, values={"temperature": [60.0] * N, **values}, unanswered=unanswered)


def test_a_counter_that_appears_with_its_first_event_is_a_rise_from_zero():
    # dcgm-exporter 4.5.3-4.8.2 leaves a counter blank until its first event: rank 4's
    # remapped-rows series first appears at 1 while every other GPU's is there at 0
    ledger = Ledger()
    others = [0.0 if r != 4 else math.nan for r in range(N)]
    for t in range(0, 30, 2):
        assert ledger.update(probed(t, {"remapped_rows": others})) == []
    found = ledger.update(probed(30, {"remapped_rows": [1.0 if r == 4 else 0.0
                                                        for r in range(N)]}))
    assert [(a.kind, a.rank) for a in found] == [("memory", 4)]
    assert ledger_lines(ledger.entries, 4) == [
        "row(s) remapped +1 in the last 10 min (1 in all): an uncorrectable memory error"]


def test_a_counter_asked_for_its_non_zero_series_only_rises_from_zero_when_it_appears():
    # no GPU had NVLink errors when ranktop began: the counter was in no answer at all
    ledger = Ledger()
    nodes = {0: list(range(N))}
    for t in range(0, 60, 2):
        assert ledger.update(probed(t, {}), nodes) == []
    rising = [3880.0 if r == 4 else math.nan for r in range(N)]
    found = ledger.update(probed(60, {"nvlink_errors": rising}), nodes)
    assert [(a.kind, a.rank) for a in found] == [("nvlink_errors", 4)]
    assert "+3880 on rank 4" in found[0].summary


def test_a_counter_whose_query_went_unanswered_is_not_known_to_have_been_zero():
    ledger = Ledger()
    lost = frozenset({"pcie_replay"})
    ledger.update(probed(0, {}, unanswered=lost))  # it failed at the first poll
    assert ledger.update(probed(2, {"pcie_replay": [12.0] * N})) == []
    assert ledger_lines(ledger.entries, 0) == ["PCIe replay(s) 12, none new"]


def test_a_gpu_that_did_not_answer_at_all_is_judged_from_its_first_value():
    # its exporter was down (no temperature, no counter) when ranktop began
    ledger = Ledger()
    silent = [math.nan if r == 2 else 60.0 for r in range(N)]
    ledger.update(Frame(time=0, values={"temperature": silent,
                                        "nvlink_errors": [0.0 if r != 2 else math.nan
                                                          for r in range(N)]}))
    assert ledger.update(probed(2, {"nvlink_errors": [500.0 if r == 2 else 0.0
                                                      for r in range(N)]})) == []
    assert ledger_lines(ledger.entries, 2) == ["NVLink CRC error(s) 500, none new"]


def test_errors_that_rose_before_the_first_poll_count_from_the_backends_past():
    # a late start with no replay: the backend's lowest value over the window before it
    # is the baseline, not the value at the first poll
    ledger = Ledger()
    before = [0.0] * N
    before[4] = math.nan  # no series then: not known
    ledger.seed({"nvlink_errors": before, "remapped_rows": [0.0] * N}, 0.0)
    found = ledger.update(counters(400, nvlink_errors={2: 3880.0, 4: 500.0},
                                   remapped_rows={6: 1.0}))
    assert sorted((a.kind, a.rank) for a in found) == [("memory", 6), ("nvlink_errors", 2)]
    assert "+3880 in the last 10 min" in next(a.summary for a in found if a.rank == 2)
    assert ledger_lines(ledger.entries, 4) == ["NVLink CRC error(s) 500, none new"]


def test_the_detectors_seed_the_ledger_from_a_late_starts_lookback():
    detectors = Detectors(DetectSettings(), RankMap.grid(["h0"], N, "test"))
    detectors.warm(Lookback(counters={"pcie_replay": [0.0] * N}, counters_at=100.0))
    found = detectors.update(counters(200, pcie_replay={3: 40.0}))
    assert [(a.kind, a.rank) for a in found if a.kind == "pcie"] == [("pcie", 3)]
