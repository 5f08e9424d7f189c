"""A hardware fault that a restart does not mend outlives the restart: the XID 79 of a rank
that died keeps its row and its drain once the job is back, marked "before the restart",
for the ledger's window; an application's XID ends with the process that raised it."""

from __future__ import annotations

from ranktop.tui.core.detect.hardware import WINDOW_SECONDS
from ranktop.tui.core.detect.lasting import BEFORE_RESTART, LastingFaults, mended_by_restart
from ranktop.tui.simulator.scenario import Fault

from tests.tui.core.job_run import job, polls

DIES_AT, BACK_AT = 60.0, 100.0


def died_of(code: int) -> list:
    """Rank 5's GPU reports XID ``code``, the rank dies 2 s later; the job is back at 100 s
    (the fault ends with the restart, as the XID series reads 0 again)."""
    faults = (Fault("xid", 5, DIES_AT, BACK_AT - DIES_AT, {"code": code}),
              Fault("rank_death", 5, DIES_AT + 2, BACK_AT - DIES_AT - 2,
                    {"dumps": "none", "others_step": 0.0}))
    return faults


def test_an_xid_79_keeps_its_row_and_its_drain_after_the_restart(tmp_path):
    *_, last = polls(job(died_of(79)), tmp_path, until=BACK_AT + 20, since=30, logs=False)
    assert last.ranks_up == len(last.rank_map)  # the job is back
    (xid,) = [a for a in last.anomalies if a.kind == "xid"]
    assert xid.rank == 5 and f"XID 79: GPU has fallen off the bus ({BEFORE_RESTART})" \
        in xid.summary
    assert last.frame.time - xid.since >= BACK_AT + 20 - DIES_AT  # since the fault itself
    (drain,) = [a for a in last.actions if a.kind == "drain"]
    assert drain.rank == 5 and "XID 79" in drain.text
    (restart,) = last.restarts
    assert restart.rank == 5 and "XID 79" in restart.summary


def test_an_applications_xid_ends_with_the_restart(tmp_path):
    *_, last = polls(job(died_of(13)), tmp_path, until=BACK_AT + 20, since=30, logs=False)
    assert last.ranks_up == len(last.rank_map)
    assert [a for a in last.anomalies if a.kind == "xid"] == []
    assert [a for a in last.actions if a.kind in ("drain", "reset")] == []


def test_a_lasting_fault_is_kept_for_the_window_and_ends_with_a_new_one():
    lasting = LastingFaults()
    down, up = (True, False), (True, True)
    before = {1: "XID 79: GPU has fallen off the bus"}
    kept = lasting.update(0.0, "xid", {}, before, {1: "79"}, down, up)
    assert kept == {1: f"XID 79: GPU has fallen off the bus ({BEFORE_RESTART})"}
    assert lasting.update(WINDOW_SECONDS - 1, "xid", {}, {}, {}, up, up) == kept
    assert lasting.update(WINDOW_SECONDS, "xid", {}, {}, {}, up, up) == {}
    lasting.update(0.0, "xid", {}, before, {1: "79"}, down, up)
    assert lasting.update(5.0, "xid", {1: "XID 48: …"}, {}, {}, up, up) == {}
    # a rank that never went down is no restart: its XID reading 0 again is the GPU's word
    assert LastingFaults().update(0.0, "xid", {}, before, {1: "79"}, up, up) == {}


def test_which_xids_a_restart_mends():
    assert [code for code in (13, 31, 43, 45, 79, 48, 94, 64, 92, 999)
            if not mended_by_restart(code)] == [79, 48, 94, 64]
