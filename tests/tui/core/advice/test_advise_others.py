"""A drain carries who else is on its node, as the analysis holds it (and a copy of the
analysis with other neighbours, the advice worked out again, carries those)."""

from __future__ import annotations

from dataclasses import replace

from ranktop.tui.core.advice.advise import DRAIN, RESET
from ranktop.tui.core.advice.tenants import NodeTenants, Tenant
from ranktop.tui.core.analysis import Analysis
from ranktop.tui.core.detect.down import DownRank
from ranktop.tui.core.model import Health, SourceStatus

from tests.tui.core.advice.test_advise import RANKS, anomaly, frame

EVAL = NodeTenants((Tenant("research/eval-0", (8, 9)),))


def analysis(neighbours: dict[str, NodeTenants]) -> Analysis:
    down = {13: DownRank(13, 998.0, 996.0, {"xid": 79.0, "recovery_action": 1.0})}
    return Analysis(SourceStatus("test", Health.OK, since=0.0), RANKS,
                    frame(dead=13, ecc_dbe={2: 1.0}),
                    anomalies=(anomaly("xid", 13, "79"), anomaly("missing", 13),
                               anomaly("ecc", 2)),
                    down_ranks=down, neighbours=neighbours)


def test_the_drain_names_the_others_on_its_node_and_a_reset_none():
    found = analysis({"gpu-node-001": EVAL, "gpu-node-000": NodeTenants()})
    by_kind = {a.kind: a for a in found.actions}
    drain, reset = by_kind[DRAIN], by_kind[RESET]
    assert drain.others == EVAL
    assert drain.also == ("also on gpu-node-001: research/eval-0 (GPUs 8, 9): a drain stops "
                          "it too")
    assert (reset.others, reset.also) == (None, "")


def test_a_copy_with_other_neighbours_advises_with_those():
    found = analysis({"gpu-node-001": EVAL})
    unknown = replace(found, neighbours={})
    [drain] = [a for a in unknown.actions if a.kind == DRAIN]
    assert drain.others is None
    assert drain.also == "also on gpu-node-001: not known"
