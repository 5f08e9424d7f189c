"""The simulated job's logs as one file a process (NCCL_DEBUG_FILE=nccl.%h.%p.log), rotated so
that the files lose their NCCL init lines; and the whole way from those files to each rank's
log and to the hang verdict."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from ranktop.tui.cli.check_logs import check_logs
from ranktop.tui.core.hang.triage import triage
from ranktop.tui.core.hang.watch import TriageAsk
from ranktop.tui.logs.rank_logs import RankLogs
from ranktop.tui.logs.triage_worker import TriageWorker
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.log_writer import LogWriter
from ranktop.tui.simulator.scenario import Fault, Scenario

DEAD = 9  # node 2, GPU 1: its XID's CUDA error is an NCCL WARN line carrying device [1]
FAULTS = (
    Fault("log_rotation", 0, 10.0, 2.0, {"mode": "rename", "nodes": 4}),
    Fault("xid", DEAD, 20.0, 30.0, {"code": 79}),
    Fault("rank_death", DEAD, 22.0, 60.0, {"dumps": "none"}),
)
SCENARIO = Scenario("per-process", 120.0, 1.12, 4194304, FAULTS, log_layout="nccl_files")


def written(root: Path, until: float) -> LogWriter:
    writer = LogWriter(SimCluster(4, 4, seed=0, scenario=SCENARIO), root)
    t = 0.0
    while t < until:
        writer.advance(t)
        t += 2.0
    writer.advance(until)
    return writer


@pytest.fixture(scope="module")
def hung(tmp_path_factory: pytest.TempPathFactory) -> LogWriter:
    """Every live rank's watchdog has fired (the all-reduce hung at 22 s, 30 s timeout)."""
    return written(tmp_path_factory.mktemp("per-process"), 60.0)


def test_one_file_a_process_named_by_host_and_pid(hung: LogWriter) -> None:
    assert hung.layout_spec == f"nccl:{hung.root}/nccl.%h.%p.log"
    live = sorted(hung.root.glob("nccl.*.log"))
    assert len(live) == 16
    assert {path.name.split(".")[1] for path in live} == {f"gpu-node-{n:03d}" for n in range(4)}
    rotated = sorted(hung.root.glob("nccl.*.log.1"))
    assert len(rotated) == 16
    assert all("Init COMPLETE" in path.read_text() for path in rotated)
    assert not any("Init COMPLETE" in path.read_text() for path in live)  # rotated away
    assert not any("stderr" in path.name for path in hung.root.rglob("*"))


@pytest.mark.parametrize("spec", ["nccl:{root}/nccl.*.%p.log", "nccl:{root}/nccl.*.log",
                                  "nccl:{root}/nccl.%h.%p.log"])
def test_each_rank_is_shown_its_own_file_or_none(hung: LogWriter, spec: str) -> None:
    logs = RankLogs(spec.format(root=hung.root))
    rank_map = hung.cluster.rank_map
    for rank in range(16):
        paths, note = logs.files(rank_map, rank)
        for path in paths:
            history = path.read_text() + path.with_name(path.name + ".1").read_text()
            assert f"rank {rank} nranks 16" in history, (rank, path, note)


@pytest.mark.parametrize("spec", ["nccl:{root}/nccl.*.%p.log", "nccl:{root}/nccl.%h.%p.log"])
def test_the_hang_verdict_through_per_process_files(hung: LogWriter, spec: str) -> None:
    logs = RankLogs(spec.format(root=hung.root))
    lines = logs.triage_lines(hung.cluster.rank_map)
    verdict = triage(lines, world_size=16, gone=[DEAD])
    assert verdict is not None and verdict.behind == [DEAD]
    assert verdict.reporting == [r for r in range(16) if r != DEAD]


def test_a_pattern_that_matches_no_live_rank_says_so_not_that_none_timed_out(
        hung: LogWriter) -> None:
    spec = f"nccl:{hung.root}/nccl.%h.%p.txt"  # a wrong extension: no file for any rank
    worker = TriageWorker(RankLogs(spec).triage_batches, log_spec=spec)
    result = worker.run(TriageAsk(1, 60.0, hung.cluster.rank_map, (DEAD,), (DEAD,)))
    verdict = result.verdict
    assert verdict is not None and verdict.behind == [DEAD]
    assert "no live rank has logged a timeout" not in verdict.summary
    assert verdict.summary.startswith(f"rank {DEAD} is not reporting (its series vanished):"
                                      f" no live "
                                      "rank's log was read; ")
    assert verdict.summary.endswith(f"no file matched for 16 ranks (ranks 0, 1, 2, 3, 4, ...): "
                                    f"check the pattern with `ranktop check-config --logs "
                                    f"'{spec}'`")
    assert verdict.log_gaps is not None and verdict.log_gaps.no_file == tuple(range(16))


def test_check_config_finds_a_file_for_every_rank_of_the_rotated_job(hung: LogWriter) -> None:
    out = StringIO()
    assert check_logs(f"nccl:{hung.root}/nccl.*.log", hung.cluster.rank_map, out)
    assert "a file for     16 of 16 ranks" in out.getvalue()
    out = StringIO()
    assert not check_logs(f"nccl:{hung.root}/nccl.gpu-node-001.%p.log", hung.cluster.rank_map,
                          out)
    assert "a file for     4 of 16 ranks" in out.getvalue()
    assert "e.g.           rank 4: " in out.getvalue()
    assert "the first: rank 0 (gpu-node-000 GPU 0): no file found for rank 0" in out.getvalue()
