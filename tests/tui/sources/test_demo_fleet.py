"""The demo's fleet: its own job beside the small jobs of config/fleet.toml, one stalled and
one that lost a rank, judged as the jobs list judges Prometheus's; the demo job's tenant
shares its node in both rows."""

from __future__ import annotations

from ranktop.tui.core.fleet import Verdict, ranked
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.demo_fleet import NODE_LIMIT, DemoFleet

from tests.tui.conftest import START, FakeClock


def _fleet(at: float) -> DemoFleet:
    return DemoFleet(load_settings(environ={}).demo, START, FakeClock(START + at))


def test_the_list_puts_the_stalled_and_the_dead_rank_first_from_the_first_refresh():
    fleet = _fleet(at=5.0)
    read = fleet.read()
    rows = ranked(read.jobs, read.time, fleet.limits)
    verdicts = {row.facts.name: row.verdict for row in rows}
    assert verdicts["rlhf-stalled"] is Verdict.STALLED
    assert verdicts["pretrain-dead-rank"] is Verdict.MISSING
    assert rows[0].facts.name == "rlhf-stalled"
    assert {"eval-sweep-7", "finetune-8b"} <= {r.facts.name for r in rows if r.healthy}
    demo = next(row for row in rows if row.facts.name == fleet.demo_job)
    assert demo.facts.ranks_expected == 512 and demo.facts.ranks_up == 512


def test_the_demo_jobs_faults_reach_its_row_as_the_scenario_unfolds():
    fleet = _fleet(at=200.0)  # rank 455 died at 172 s
    facts = fleet.facts(fleet.demo_job, START + 200.0)
    assert facts.ranks_up == 511
    hot = fleet.facts(fleet.demo_job, START + 60.0)
    assert hot.hottest_c is not None and hot.hottest_c > 85


def test_the_other_jobs_are_small_and_the_shared_node_is_said_in_both_rows():
    fleet = _fleet(at=5.0)
    others = [job for name, job in fleet.jobs.items() if name != fleet.demo_job]
    assert len(others) >= 3
    assert all(len(job.cluster.rank_map) <= NODE_LIMIT * 8 for job in others)
    assert len({len(job.cluster.rank_map) for job in others}) > 1
    read = {facts.name: facts for facts in fleet.read().jobs}
    assert read[fleet.demo_job].shared == {"gpu-node-056": ("eval-sweep-7",)}
    assert read["eval-sweep-7"].shared == {"gpu-node-056": (fleet.demo_job,)}
    assert read["finetune-8b"].shared == {}


def test_each_job_has_its_console_source_and_nothing_else_does():
    fleet = _fleet(at=5.0)
    source = fleet.source("rlhf-stalled")
    assert source is not None and len(source.rank_map) == 24
    assert fleet.source("not-a-job") is None
