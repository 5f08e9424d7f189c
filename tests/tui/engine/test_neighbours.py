"""Who else is on a drained node, as the engine asks for it: only about nodes the advice
drains, each answer kept a minute, a failure one line with the drain (never the poll's);
the drain carries it in a thread and across an engine process."""

from __future__ import annotations

import asyncio

from ranktop.tui.core.advice.advise import DRAIN, RESET, WATCH, Action
from ranktop.tui.core.advice.tenants import NodeTenants, Tenant
from ranktop.tui.engine.neighbours import KEPT_SECONDS, NeighbourCache
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.engine.process import ProcessEngine
from ranktop.tui.settings.config import DemoSettings, Settings, load_settings
from ranktop.tui.sources.base import Source
from ranktop.tui.sources.demo import DemoSource, demo_source

from tests.tui.conftest import START, FakeClock

EVAL = NodeTenants((Tenant("job eval-sweep-7", (8, 9)),))
ACTIONS = [Action(DRAIN, "r", "e", node="n1"), Action(RESET, "r", "e", node="n0", gpu=1),
           Action(WATCH, "r", "e", node="n2", rank=3), Action(DRAIN, "r", "e", node="n3")]


class AskedSource(Source):
    """Answers who else is on a node from a table, and notes each ask."""

    def __init__(self, table: dict[str, NodeTenants], failing: bool = False) -> None:
        self.table, self.failing = table, failing
        self.asked: list[list[str]] = []

    def tenants(self, nodes):
        self.asked.append(list(nodes))
        if self.failing:
            raise TimeoutError("timed out after 10 s")
        return {node: self.table[node] for node in nodes if node in self.table}


def test_only_drained_nodes_are_asked_about_each_kept_a_minute():
    source, clock = AskedSource({"n1": EVAL, "n3": NodeTenants()}), FakeClock(START)
    cache = NeighbourCache(source, clock)
    assert cache.of(ACTIONS) == {"n1": EVAL, "n3": NodeTenants()}
    assert source.asked == [["n1", "n3"]]
    clock.now += KEPT_SECONDS - 1
    assert cache.of(ACTIONS[:1]) == {"n1": EVAL}
    assert source.asked == [["n1", "n3"]]  # kept
    clock.now += 1
    assert cache.of([*ACTIONS, Action(DRAIN, "r", "e", node="n4")]) == {
        "n1": EVAL, "n3": NodeTenants()}  # n4: the source cannot tell, left out
    assert source.asked == [["n1", "n3"], ["n1", "n3", "n4"]]
    assert cache.of(ACTIONS[1:3]) == {} and len(source.asked) == 2  # no drain: no ask


def test_a_failure_is_one_line_for_the_node_and_kept_as_an_answer_is():
    source, clock = AskedSource({}, failing=True), FakeClock(START)
    cache = NeighbourCache(source, clock)
    found = cache.of(ACTIONS[:1])
    assert found == {"n1": NodeTenants(error="the backend could not say: timed out after 10 s")}
    cache.of(ACTIONS[:1])
    assert len(source.asked) == 1


def demo_at(at: float, clock: FakeClock | None = None) -> DemoSource:
    return demo_source(DemoSettings(64, 8, seed=7), clock or FakeClock(START + at), START)


def drain_of(analysis, node: str = "gpu-node-056") -> Action:
    return next(a for a in analysis.actions if a.kind == DRAIN and a.node == node)


def asked_about(asked: list[list[str]], node: str) -> int:
    return sum(node in nodes for nodes in asked)


def test_a_poll_with_a_drain_carries_who_else_is_on_its_node_asked_once():
    clock = FakeClock(START + 166.0)
    source = demo_at(166.0, clock)
    asked: list[list[str]] = []
    answer = source.tenants
    source.tenants = lambda nodes: asked.append(list(nodes)) or answer(nodes)
    pipeline = Pipeline(load_settings(environ={}), source, clock=clock)
    first = asyncio.run(pipeline.poll())
    # node 37's NVLink drain is already there (asked about); node 56 is not drained yet
    assert not any(a.kind == DRAIN and a.node == "gpu-node-056" for a in first.actions)
    assert asked == [["gpu-node-037"]]
    polls = []
    for _ in range(10):  # every 2 s: XID 79 at 170 s, rank 455 dead at 172 s
        clock.now += 2.0
        polls.append(asyncio.run(pipeline.poll()))
    drained = [p for p in polls
               if any(a.kind == DRAIN and a.node == "gpu-node-056" for a in p.actions)]
    assert drained and asked_about(asked, "gpu-node-056") == 1
    assert all(drain_of(p).others == EVAL for p in drained)
    clock.now += 20.0
    assert drain_of(asyncio.run(pipeline.poll())).others == EVAL  # kept: not asked again
    assert asked_about(asked, "gpu-node-056") == 1 and asked_about(asked, "gpu-node-037") == 1


def test_a_source_that_fails_to_say_leaves_the_poll_ok_and_the_drain_not_knowing():
    clock = FakeClock(START + 180.0)
    source = demo_at(180.0, clock)
    source.tenants = AskedSource({}, failing=True).tenants
    pipeline = Pipeline(load_settings(environ={}), source, clock=clock)
    analysis = asyncio.run(pipeline.poll())
    assert pipeline.error == ""
    assert drain_of(analysis).also == ("also on gpu-node-056: not known (the backend could "
                                       "not say: timed out after 10 s)")


def small_demo_at_180(settings: Settings) -> DemoSource:
    """The engine process's source: four nodes, so rank 455's faults and its node's other
    job fall on rank 7, on gpu-node-000."""
    return demo_source(DemoSettings(4, 8, seed=7), lambda: START + 180.0, started=START)


def test_the_drains_others_cross_from_an_engine_process():
    engine = ProcessEngine(load_settings(environ={}), small_demo_at_180)
    try:
        drain = drain_of(asyncio.run(engine.poll()).analysis, "gpu-node-000")
    finally:
        engine.close()
    assert drain.node == "gpu-node-000"
    assert drain.also == ("also on gpu-node-000: job eval-sweep-7 (GPUs 8, 9): a drain stops "
                          "it too")
