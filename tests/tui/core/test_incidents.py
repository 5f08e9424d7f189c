"""What explains what: each rule folds a consequence under its cause on the same rank, and
only there."""

from __future__ import annotations

import pytest
from ranktop.tui.core.anomaly import Anomaly
from ranktop.tui.core.incidents import RULES, Incident, explained_by, incidents

# (cause, consequence): one case per rule, written out so that a rule dropped or added
# without its test fails here.
FOLDS = [
    ("thermal", "straggler"),
    ("ecc", "memory"),
    ("ecc", "remap_failure"),
    ("xid", "missing"),
    ("xid", "pcie"),
    ("nvlink_errors", "nvlink"),
]


def anomaly(kind: str, rank: int | None = 37, severity: str = "major", since: float = 0.0,
            pending: bool = False, figure: str = "") -> Anomaly:
    return Anomaly(kind, severity, rank, f"{kind} summary", since,
                   held=0.0 if pending else 30.0, confirm_after=20.0, figure=figure)


def test_every_rule_has_its_case_here():
    assert sorted((r.cause, r.effect) for r in RULES) == sorted(FOLDS)


@pytest.mark.parametrize(("cause", "effect"), FOLDS)
def test_a_consequence_folds_under_its_cause_on_the_same_rank(cause, effect):
    root, folded = anomaly(cause), anomaly(effect)
    assert incidents([folded, root]) == (Incident(root, (folded,)),)
    found = explained_by(folded, [root, folded])
    assert found is not None and found[0] is root and found[1].why


@pytest.mark.parametrize(("cause", "effect"), FOLDS)
def test_on_another_rank_each_is_a_root_of_its_own(cause, effect):
    found = incidents([anomaly(cause, rank=37), anomaly(effect, rank=38)])
    assert [i.explained for i in found] == [(), ()]


@pytest.mark.parametrize(("cause", "effect"), FOLDS)
def test_a_consequence_whose_cause_is_gone_is_a_root(cause, effect):
    alone = anomaly(effect)
    assert incidents([alone])[0].root is alone
    assert explained_by(alone, [alone]) is None


def test_no_consequence_is_itself_a_cause_so_an_incident_is_one_level_deep():
    assert not {r.effect for r in RULES} & {r.cause for r in RULES}


def test_job_wide_anomalies_are_never_folded():
    found = incidents([anomaly("job_stall", rank=None), anomaly("throughput", rank=None)])
    assert len(found) == 2


def test_a_confirmed_critical_consequence_makes_its_root_row_critical_a_pending_one_not():
    thermal = anomaly("thermal", severity="major", since=6.0)
    straggler = anomaly("straggler", severity="critical", since=8.0, figure="1.29x")
    ecc = anomaly("ecc", rank=128, severity="critical", since=2.0)
    (first, second) = incidents([ecc, straggler, thermal])
    assert (first.root.kind, first.severity) == ("ecc", "critical")
    assert (second.root.kind, second.severity) == ("thermal", "critical")
    assert second.headline == "thermal → straggler 1.29x"
    waiting = anomaly("straggler", severity="critical", pending=True, figure="1.31x")
    (row,) = incidents([thermal, waiting])
    assert row.severity == "major" and not row.pending
    assert row.headline == "thermal → ◌ straggler 1.31x"


def test_critical_roots_come_first_then_the_oldest():
    found = incidents([anomaly("thermal", rank=1, since=1.0),
                       anomaly("missing", rank=2, severity="critical", since=9.0),
                       anomaly("ecc", rank=3, severity="critical", since=5.0)])
    assert [i.root.kind for i in found] == ["ecc", "missing", "thermal"]
