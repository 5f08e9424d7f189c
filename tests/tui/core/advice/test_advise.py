"""Advice: one action per affected node or rank, its rule and evidence, never a hardware
action for a fault in software."""

from __future__ import annotations

import math

import pytest
from ranktop.tui.core.advice.advise import (
    DRAIN,
    HARDWARE_ACTIONS,
    HARDWARE_KINDS,
    NOTHING,
    RESET,
    RESTART,
    WATCH,
    Seen,
    advise,
)
from ranktop.tui.core.advice.incidents import incidents
from ranktop.tui.core.anomaly import Anomaly
from ranktop.tui.core.detect.down import DownRank
from ranktop.tui.core.detect.hardware import COUNTERS, LedgerEntry
from ranktop.tui.core.hang.flight_triage import FlightVerdict
from ranktop.tui.core.hang.triage import HangVerdict
from ranktop.tui.core.model import Frame, RankMap

RANKS = RankMap.grid([f"gpu-node-{n:03d}" for n in range(4)], 8, "test")
N = len(RANKS)
SOFTWARE_KINDS = ("straggler", "fail_slow", "sm_stall", "job_stall", "throughput", "loss",
                  "hang", "missing", "never_seen")


def frame(dead: int | None = None, **per_rank: dict[int, float]) -> Frame:
    values = {"xid": [math.nan] * N, "recovery_action": [0.0] * N, "ecc_dbe": [0.0] * N,
              "row_remap_failure": [0.0] * N}
    for metric, found in per_rank.items():
        values.setdefault(metric, [0.0] * N)
        for rank, value in found.items():
            values[metric][rank] = value
    for series in values.values() if dead is not None else ():
        series[dead] = math.nan
    return Frame(time=1000.0, values=values)


def anomaly(kind: str, rank: int | None, figure: str = "", held: float = 60.0,
            summary: str = "it happened", pending: bool = False) -> Anomaly:
    return Anomaly(kind, "critical", rank, summary, since=1000.0 - held, held=held,
                   confirm_after=held + 10 if pending else 0.0, figure=figure)


def advice(anomalies: list[Anomaly], seen_frame: Frame | None = None,
           down: dict[int, DownRank] | None = None, hang: HangVerdict | None = None,
           ledger: dict[int, tuple[LedgerEntry, ...]] | None = None,
           left_behind: frozenset[int] = frozenset()):
    seen = Seen(RANKS, seen_frame or frame(), down or {}, ledger or {}, hang,
                left_behind=left_behind)
    return advise(incidents(anomalies, RANKS, left_behind), seen)


def test_a_gpu_fallen_off_the_bus_whose_rank_died_drains_its_node_and_restarts_the_job():
    down = {13: DownRank(13, 998.0, 996.0, {"xid": 79.0, "recovery_action": 1.0})}
    actions = advice([anomaly("xid", 13, "79"), anomaly("missing", 13)],
                     frame(dead=13), down)
    assert [a.kind for a in actions] == [DRAIN, RESTART]
    drain = actions[0]
    assert drain.text == ("drain gpu-node-001 (XID 79: GPU has fallen off the bus; "
                          "recovery action: reset)")
    assert (drain.node, drain.gpu, drain.rank) == ("gpu-node-001", 5, 13)
    assert "rank died" in drain.rule
    assert actions[1].text == "restart the job (stopped by XID 79 on rank 13)"


def test_an_uncorrectable_ecc_error_resets_the_gpu_when_idle_with_the_remap_pending():
    actions = advice([anomaly("ecc", 11)], frame(ecc_dbe={11: 1.0}, recovery_action={11: 1.0}))
    assert [a.text for a in actions] == [
        "reset GPU 3 on gpu-node-001 when idle (1 uncorrectable ECC error(s), row remap pending)"]
    assert "next reset" in actions[0].rule


def test_with_the_stock_counters_a_remapped_row_alone_still_resets_the_gpu():
    actions = advice([anomaly("memory", 11, "+1")], frame(ecc_dbe={}))
    assert actions[0].text == "reset GPU 3 on gpu-node-001 when idle (row(s) remapped +1)"


def test_a_failed_row_remap_drains_the_node():
    actions = advice([anomaly("remap_failure", 2)], frame(row_remap_failure={2: 1.0}))
    assert [(a.kind, a.node) for a in actions] == [(DRAIN, "gpu-node-000")]
    assert "no spare rows" in actions[0].evidence


@pytest.mark.parametrize("action, words", [(2, "node reboot"), (3, "drain peer-to-peer"),
                                           (4, "drain and reset")])
def test_the_gpus_own_recovery_action_asking_for_a_drain_wins(action, words):
    actions = advice([anomaly("ecc", 11)], frame(ecc_dbe={11: 1.0},
                                                 recovery_action={11: float(action)}))
    assert actions[0].kind == DRAIN
    assert actions[0].rule == f"the GPU's recovery action is {words}"
    assert actions[0].evidence.endswith(f"recovery action: {words}")


def test_an_xid_that_is_the_applications_fault_gets_no_hardware_action():
    actions = advice([anomaly("xid", 4, "13")], frame(xid={4: 13.0}))
    assert [a.kind for a in actions] == [NOTHING]
    assert actions[0].text == ("nothing to do on hardware: XID 13: graphics engine exception "
                               "is the application's, not the GPU's")


def test_an_xid_asking_for_a_reset_on_a_live_rank_resets_when_idle():
    actions = advice([anomaly("xid", 4, "63")], frame(xid={4: 63.0}, recovery_action={4: 1.0}))
    assert actions[0].text == ("reset GPU 4 on gpu-node-000 when idle (XID 63: ECC page "
                               "retirement or row remapping; recovery action: reset)")


def test_an_xid_asking_for_support_drains():
    actions = advice([anomaly("xid", 4, "64")], frame(xid={4: 64.0}, recovery_action={4: 0.0}))
    assert actions[0].kind == DRAIN and "contact NVIDIA support" in actions[0].rule


def test_a_straggler_without_hardware_evidence_is_watched():
    actions = advice([anomaly("straggler", 20, "1.45x", held=185.0)])
    assert [a.text for a in actions] == [
        "watch rank 20 (straggler 1.45x, 3 min; no hardware evidence)"]


def test_a_straggler_watch_names_a_counter_that_rose_on_its_gpu():
    pcie = next(c for c in COUNTERS if c.metric == "pcie_replay")
    ledger = {20: (LedgerEntry(pcie, 40.0, 12.0),)}
    actions = advice([anomaly("straggler", 20, "1.3x")], ledger=ledger)
    assert actions[0].kind == WATCH and "PCIe replay(s) +12" in actions[0].evidence


def test_a_hang_in_software_says_so_and_restarts_the_job():
    hang = HangVerdict([1, 2], [], [7], {}, {}, "rank 7 joined with other sizes",
                       flight=FlightVerdict("mismatch", culprits=(7,)))
    actions = advice([anomaly("hang", 7)], hang=hang)
    assert [a.text for a in actions] == [
        "restart the job (stopped by hang on rank 7)",
        "nothing to do on hardware: the hang is in software (Flight Recorder: collective "
        "mismatch)"]


def test_a_hang_whose_culprit_gpu_reported_a_fault_leaves_the_advice_to_that_fault():
    actions = advice([anomaly("hang", 7), anomaly("xid", 7, "79")],
                     frame(xid={7: 79.0}, recovery_action={7: 1.0}))
    assert NOTHING not in [a.kind for a in actions]
    assert [a.kind for a in actions] == [DRAIN, RESTART]


def test_pending_incidents_get_no_advice_yet():
    assert advice([anomaly("ecc", 11, pending=True)], frame(ecc_dbe={11: 1.0})) == ()


def test_one_drain_per_node_takes_the_nodes_resets_along():
    actions = advice([anomaly("remap_failure", 2), anomaly("ecc", 3)],
                     frame(ecc_dbe={3: 1.0}, row_remap_failure={2: 1.0}))
    assert [(a.kind, a.node) for a in actions] == [(DRAIN, "gpu-node-000")]
    assert "1 uncorrectable ECC error(s)" in actions[0].evidence


def test_resets_of_two_gpus_of_a_node_are_two_actions():
    actions = advice([anomaly("ecc", 2), anomaly("ecc", 3)], frame(ecc_dbe={2: 1.0, 3: 1.0}))
    assert [(a.kind, a.gpu) for a in actions] == [(RESET, 2), (RESET, 3)]


@pytest.mark.parametrize("kind", SOFTWARE_KINDS)
@pytest.mark.parametrize("rank", [5, None])
def test_a_software_fault_never_gets_a_hardware_action(kind, rank):
    # Even beside a latched XID and a recovery action on the same GPU from long ago.
    actions = advice([anomaly(kind, rank, "1.5x")],
                     frame(xid={5: 48.0}, recovery_action={5: 4.0}))
    assert kind not in HARDWARE_KINDS
    assert not [a for a in actions if a.kind in HARDWARE_ACTIONS]


def test_hardware_and_software_kinds_cover_every_kind_the_detectors_raise():
    from ranktop.tui.core.config_values import DetectSettings
    from ranktop.tui.core.detect.detectors import Detectors

    detectors = Detectors(DetectSettings())
    raised = {h.kind for h in detectors.holds.values()} | {c.kind for c in COUNTERS}
    assert raised <= HARDWARE_KINDS | set(SOFTWARE_KINDS)


def test_a_critical_xid_on_a_live_rank_drains_its_node():
    actions = advice([anomaly("xid", 4, "79")], frame(xid={4: 79.0}, recovery_action={4: 1.0}))
    assert actions[0].kind == DRAIN and "drain the node first" in actions[0].rule


def crc_ledger(rises: dict[int, float]) -> dict[int, tuple[LedgerEntry, ...]]:
    crc = next(c for c in COUNTERS if c.kind == "nvlink_errors")
    return {rank: (LedgerEntry(crc, 5000.0 + rise, rise, raised=rise >= crc.min_rise),)
            for rank, rise in rises.items()}


def test_nvlink_crc_errors_on_one_gpu_reset_it_when_idle():
    # A few errors on a peer stay under the ledger's bar: still one GPU's link.
    actions = advice([anomaly("nvlink_errors", 12, "+900")], ledger=crc_ledger({12: 900.0,
                                                                               13: 40.0}))
    assert [a.text for a in actions] == [
        "reset GPU 4 on gpu-node-001 when idle (NVLink CRC errors +900 in the last 10 min)"]
    assert "one GPU" in actions[0].rule


def test_nvlink_crc_errors_on_two_gpus_of_a_node_drain_it():
    # Rank 20 is on another node: it does not count for gpu-node-001.
    ledger = crc_ledger({12: 900.0, 13: 150.0, 20: 500.0})
    actions = advice([anomaly("nvlink_errors", 12, "+1050")], ledger=ledger)
    assert [a.text for a in actions] == [
        "drain gpu-node-001 (NVLink CRC errors +1050 on 2 GPUs of the node in the last 10 min)"]
    assert "2 or more GPUs of a node" in actions[0].rule and "NVSwitch" in actions[0].rule


def test_nvlink_crc_errors_with_the_recovery_action_drain_p2p_drain_the_node():
    actions = advice([anomaly("nvlink_errors", 12, "+900")], frame(recovery_action={12: 3.0}),
                     ledger=crc_ledger({12: 900.0}))
    assert [(a.kind, a.node) for a in actions] == [(DRAIN, "gpu-node-001")]
    assert actions[0].rule == "the GPU's recovery action is drain peer-to-peer"


def test_an_nvlink_xid_drains_the_node_for_its_recovery_action():
    actions = advice([anomaly("xid", 12, "74")], frame(xid={12: 74.0}, recovery_action={12: 3.0}))
    assert actions[0].text == ("drain gpu-node-001 (XID 74: NVLink error; recovery action: "
                               "drain peer-to-peer)")


def test_a_drain_for_spread_nvlink_errors_holds_while_they_age_out_of_the_window():
    # The neighbour's rise has sunk under the bar as the window slides past the fault, but
    # the ledger still has it raised: the node's drain does not turn back into a reset.
    ledger = crc_ledger({12: 900.0})
    crc = ledger[12][0].counter
    ledger[13] = (LedgerEntry(crc, 5060.0, 60.0, raised=True),)
    actions = advice([anomaly("nvlink_errors", 12, "+960")], ledger=ledger)
    assert [(a.kind, a.node) for a in actions] == [(DRAIN, "gpu-node-001")]


def test_a_rank_the_job_stepped_on_without_gets_no_restart_but_says_the_job_goes_on():
    down = {13: DownRank(13, 940.0, 938.0)}
    actions = advice([anomaly("missing", 13), anomaly("job_stall", None)], frame(dead=13),
                     down, left_behind=frozenset({13}))
    assert RESTART not in [a.kind for a in actions]
    said = next(a for a in actions if a.rank == 13)
    assert said.kind == NOTHING
    assert said.text == ("nothing to do on hardware: rank 13 down 60 s (its series vanished);"
                         " the job goes on without it")
    assert any(a.kind == NOTHING and "job stall" in a.text for a in actions)  # its own root


def test_a_hardware_fault_that_killed_a_rank_left_behind_keeps_its_action_without_restart():
    down = {13: DownRank(13, 998.0, 996.0, {"xid": 79.0, "recovery_action": 1.0})}
    actions = advice([anomaly("xid", 13, "79"), anomaly("missing", 13)], frame(dead=13),
                     down, left_behind=frozenset({13}))
    assert [a.kind for a in actions] == [DRAIN]


def test_a_dead_rank_not_left_behind_still_restarts_beside_one_that_is():
    down = {13: DownRank(13, 940.0, 938.0), 20: DownRank(20, 990.0, 988.0)}
    actions = advice([anomaly("missing", 13), anomaly("missing", 20)], frame(dead=13), down,
                     left_behind=frozenset({13}))
    restart = next(a for a in actions if a.kind == RESTART)
    assert restart.evidence == "stopped by missing on rank 20"
