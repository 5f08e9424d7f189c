"""The engine in the UI's process: snapshots versioned per analysis and per rank map."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from ranktop.tui.core.model import RankMap
from ranktop.tui.engine.threaded import ThreadEngine
from ranktop.tui.settings.config import DemoSettings, load_settings
from ranktop.tui.sources.demo import demo_source
from ranktop.tui.sources.merged import MergedSource

from tests.tui.conftest import START, FakeClock


def engine_at(at: float = 20.0) -> ThreadEngine:
    clock = FakeClock(START + at)
    source = demo_source(DemoSettings(4, 8, seed=7), clock, started=START)
    return ThreadEngine(load_settings(environ={}), source, clock=clock)


def test_each_poll_is_a_new_version_and_an_equal_rank_map_keeps_its_version():
    engine = engine_at()
    assert engine.latest.version == 0 and engine.latest.analysis.frame is None
    first = asyncio.run(engine.poll())
    engine.source.rank_map = replace(engine.source.rank_map)  # equal, not the same object
    second = asyncio.run(engine.poll())
    assert (first.version, second.version) == (1, 2)
    assert second.rank_map_version == first.rank_map_version


def test_a_different_rank_map_is_a_new_rank_map_version():
    engine = engine_at()
    first = asyncio.run(engine.poll())
    grown = RankMap.grid([*engine.source.rank_map.hosts, "gpu-node-999"], 8, "test")
    engine.source.rank_map = grown
    second = asyncio.run(engine.poll())
    assert second.rank_map_version == first.rank_map_version + 1
    shown = second.analysis.rank_map
    assert [(r.rank, r.host, r.gpu) for r in shown.ranks] == [
        (r.rank, r.host, r.gpu) for r in grown.ranks]
    # the new node's ranks have no GPU data (the demo has 4 nodes): named by local rank
    assert shown.ranks[-1].place == "gpu-node-999 local rank 7"


def test_a_past_moment_of_the_live_rank_map_has_its_number_and_a_change_back_too():
    engine = engine_at(60.0)
    live = asyncio.run(engine.poll())
    past = asyncio.run(engine.at(START + 30.0))
    assert past.rank_map_version == live.rank_map_version
    grown = RankMap.grid([*engine.source.rank_map.hosts, "gpu-node-999"], 8, "test")
    engine.source.rank_map, was = grown, engine.source.rank_map
    changed = asyncio.run(engine.poll())
    assert changed.rank_map_version != live.rank_map_version
    engine.source.rank_map = replace(was)  # back to a map equal to the first
    assert asyncio.run(engine.poll()).rank_map_version == live.rank_map_version


def test_prometheus_and_nvml_merged_keep_the_servers_retry_after_and_the_history():
    clock = FakeClock(START + 20.0)
    job = demo_source(DemoSettings(4, 8, seed=7), clock, started=START)
    job.retry_after = 30.0  # as a Prometheus source told to wait by its server
    local = demo_source(DemoSettings(1, 8, seed=7), clock, started=START)
    engine = ThreadEngine(load_settings(environ={}), MergedSource(job, local), clock=clock)
    snapshot = asyncio.run(engine.poll())
    assert snapshot.retry_after == 30.0
    points, note = engine.backfill(snapshot.analysis.rank_map, 3)
    assert note == "" and points["temperature"]
    assert engine.gpu_model(3) == job.gpu_model(3) != ""


def test_the_dead_ranks_hang_stays_under_its_xid_across_the_restart(tmp_path):
    """Rank 455's GPU falls off the bus (172 s), the rank dies, the job hangs, torchrun
    restarts it (~218 s): the hang is one row with its XID all along, never a row of its own
    for the polls between the rank's return and the hang's end."""
    clock = FakeClock(START)
    source = demo_source(DemoSettings(64, 8, seed=7), clock, started=START, log_root=tmp_path)
    engine = ThreadEngine(load_settings(environ={}), source, clock=clock)
    try:
        for t in range(150, 232, 2):
            clock.now = START + t
            analysis = asyncio.run(engine.poll()).analysis
            if engine.pipeline.triage is not None:
                engine.pipeline.triage.wait(20.0)  # a prompt machine's answers
            roots = [i.root.kind for i in analysis.incidents if i.root.rank == 455]
            assert "hang" not in roots, (t, roots)
            if t >= 180:
                assert roots == ["xid"], (t, roots)
    finally:
        engine.close()
