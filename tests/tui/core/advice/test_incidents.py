"""What explains what: each rule folds a consequence under its cause where the rule says
(the same rank, the same node, or the whole job), and only there."""

from __future__ import annotations

import pytest
from ranktop.tui.core.advice.incidents import RULES, Incident, explained_by, incidents
from ranktop.tui.core.anomaly import Anomaly
from ranktop.tui.core.model import RankMap

# (cause, consequence, where the consequence is): one case per rule, written out so that a
# rule dropped or added without its test fails here. Rank 37 is the cause's.
FOLDS = [
    ("thermal", "straggler", 37),
    ("ecc", "memory", 37),
    ("ecc", "remap_failure", 37),
    ("xid", "missing", 37),
    ("xid", "pcie", 37),
    ("xid", "hang", 37),
    ("nvlink_errors", "nvlink", 32),  # the node's first GPU: the node-wide drop
    ("missing", "hang", 37),
    ("hang", "job_stall", None),
    ("hang", "throughput", None),
    ("hang", "missing", 12),  # a rank that went down with the hung job
    ("missing", "job_stall", None),
    ("missing", "throughput", None),
    ("job_stall", "throughput", None),
]
# Where each fold must not happen: another node for a node's rule, the same rank for a job's.
ELSEWHERE = {37: 38, 32: 40, None: 37, 12: 37}
RANK_MAP = RankMap.grid([f"node-{n}" for n in range(8)], 8, "test")


def anomaly(kind: str, rank: int | None = 37, severity: str = "major", since: float = 0.0,
            pending: bool = False, figure: str = "") -> Anomaly:
    return Anomaly(kind, severity, rank, f"{kind} summary", since,
                   held=0.0 if pending else 30.0, confirm_after=20.0, figure=figure)


def test_every_rule_has_its_case_here():
    assert sorted((r.cause, r.effect) for r in RULES) == sorted(f[:2] for f in FOLDS)


@pytest.mark.parametrize(("cause", "effect", "where"), FOLDS)
def test_a_consequence_folds_under_its_cause(cause, effect, where):
    root, folded = anomaly(cause), anomaly(effect, rank=where)
    assert incidents([folded, root], RANK_MAP) == (Incident(root, (folded,)),)
    found = explained_by(folded, [root, folded], RANK_MAP)
    assert found is not None and found[0] is root and found[1].why


@pytest.mark.parametrize(("cause", "effect", "where"), FOLDS)
def test_out_of_its_rules_reach_the_cause_does_not_explain_it(cause, effect, where):
    root, elsewhere = anomaly(cause), anomaly(effect, rank=ELSEWHERE[where])
    assert explained_by(elsewhere, [root, elsewhere], RANK_MAP) is None


@pytest.mark.parametrize(("cause", "effect", "where"), FOLDS)
def test_a_consequence_whose_cause_is_gone_is_a_root(cause, effect, where):
    alone = anomaly(effect, rank=where)
    assert incidents([alone], RANK_MAP)[0].root is alone
    assert explained_by(alone, [alone], RANK_MAP) is None


def test_a_node_rule_without_a_rank_map_folds_nothing():
    found = incidents([anomaly("nvlink_errors", rank=37), anomaly("nvlink", rank=32)])
    assert len(found) == 2


def test_a_dead_ranks_hang_is_one_row_rooted_at_what_killed_it():
    xid = anomaly("xid", rank=455, since=170.0, figure="79")
    dead = anomaly("missing", rank=455, severity="critical", since=172.0)
    hang = anomaly("hang", rank=455, severity="critical", since=172.0)
    stall = anomaly("job_stall", rank=None, severity="critical", since=180.0)
    slow = anomaly("throughput", rank=None, since=180.0)
    other = anomaly("missing", rank=12, severity="critical", since=190.0)
    (row,) = incidents([stall, hang, dead, slow, other, xid])
    assert row.root is xid and row.rank == 455 and row.severity == "critical"
    # nearer causes first: what killed the rank, then the hang, then what the hang explains
    assert row.headline == "xid → missing → hang → job stall → throughput → missing"
    assert explained_by(stall, [stall, hang, dead])[0] is hang


def test_causes_that_loop_pick_one_root_whichever_anomaly_the_loop_is_entered_from():
    # Two hangs each naming a dead rank: each hang explains the other rank's death.
    old = [anomaly("missing", rank=r, severity="critical", since=9.0) for r in (3, 5)]
    hangs = [anomaly("hang", rank=r, severity="critical", since=9.0) for r in (3, 5)]
    for ordering in ([*old, *hangs], [*hangs, *reversed(old)]):
        (row,) = incidents(ordering)
        assert row.root.key == ("hang", 3) and len(row.explained) == 3


def test_a_confirmed_critical_consequence_makes_its_root_row_critical_a_pending_one_not():
    thermal = anomaly("thermal", severity="major", since=6.0)
    straggler = anomaly("straggler", severity="critical", since=8.0, figure="1.29x")
    ecc = anomaly("ecc", rank=128, severity="critical", since=2.0)
    (first, second) = incidents([ecc, straggler, thermal])
    assert (first.root.kind, first.severity) == ("thermal", "critical")
    assert (second.root.kind, second.severity) == ("ecc", "critical")
    assert first.headline == "thermal → straggler 1.29x"
    waiting = anomaly("straggler", severity="critical", pending=True, figure="1.31x")
    (row,) = incidents([thermal, waiting])
    assert row.severity == "major" and not row.pending
    assert row.headline == "thermal → ◌ straggler 1.31x"


def test_critical_roots_come_first_then_the_newest():
    found = incidents([anomaly("thermal", rank=1, since=10.0),
                       anomaly("missing", rank=2, severity="critical", since=5.0),
                       anomaly("ecc", rank=3, severity="critical", since=9.0)])
    assert [i.root.kind for i in found] == ["ecc", "missing", "thermal"]


def test_a_hang_with_no_culprit_roots_the_job_wide_stall_and_throughput_drop():
    hang = anomaly("hang", rank=None, severity="critical")
    stall, slow = anomaly("job_stall", rank=None), anomaly("throughput", rank=None)
    (row,) = incidents([stall, slow, hang])
    assert row.root is hang and row.explained == (stall, slow)


# The folds that hold because a dead rank stops the job, and the place of the missing rank.
STOPPING_FOLDS = [("missing", "hang", 37), ("hang", "missing", 12),
                  ("missing", "job_stall", None), ("missing", "throughput", None)]


@pytest.mark.parametrize(("cause", "effect", "where"), STOPPING_FOLDS)
def test_a_rank_the_job_stepped_on_without_explains_nothing_of_a_stop(cause, effect, where):
    root, other = anomaly(cause), anomaly(effect, rank=where)
    gone = next(a for a in (root, other) if a.kind == "missing")
    found = incidents([other, root], RANK_MAP, behind={gone.rank})
    assert sorted(i.root.kind for i in found) == sorted([cause, effect])
    assert all(not i.explained for i in found)
    assert explained_by(other, [root, other], RANK_MAP, behind={gone.rank}) is None


def test_only_the_folds_of_a_stopped_job_ask_whether_the_rank_was_left_behind():
    assert sorted((r.cause, r.effect) for r in RULES if r.stops) == sorted(
        f[:2] for f in STOPPING_FOLDS)


def test_what_killed_a_rank_the_job_stepped_on_without_still_explains_its_death():
    xid, gone = anomaly("xid"), anomaly("missing")
    assert incidents([gone, xid], RANK_MAP, behind={37}) == (Incident(xid, (gone,)),)


def test_another_ranks_death_still_stops_the_job_beside_one_left_behind():
    left, dead, stall = anomaly("missing", rank=5), anomaly("missing"), anomaly("job_stall", None)
    found = incidents([left, dead, stall], RANK_MAP, behind={5})
    assert Incident(dead, (stall,)) in found and Incident(left) in found
