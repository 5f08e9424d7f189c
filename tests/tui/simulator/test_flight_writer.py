"""The whole path: the simulator's ranks write Flight Recorder dumps of their hang, the
reader reads them, the analysis names the rank, group, collective and call site, and the
joined verdict agrees with the watchdog lines of the same simulated job."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from ranktop.tui.core.hang.flight_triage import analyse_dumps
from ranktop.tui.core.hang.join import join_verdicts
from ranktop.tui.core.hang.triage import triage
from ranktop.tui.flight.reader import read_dumps
from ranktop.tui.logs.collect import lines_by_rank
from ranktop.tui.logs.rank_logs import RankLogs
from ranktop.tui.simulator import flight_writer
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.flight_writer import FlightWriter, link_whole
from ranktop.tui.simulator.log_writer import LogWriter, hung_seq
from ranktop.tui.simulator.scenario import Fault, Scenario

CULPRIT = 5
START, DURATION = 20.0, 60.0
SEEN_AT = START + 33.0  # past every rank's watchdog and dump
TRAIN = "/workspace/llama/train.py"


def job(effect: str, **params: str) -> SimCluster:
    scenario = Scenario("fr-test", 120.0, 1.12, 4_194_304,
                        (Fault(effect, CULPRIT, START, DURATION, params),))
    return SimCluster(nodes=4, gpus_per_node=4, seed=3, scenario=scenario)


def run(cluster: SimCluster, root: Path, until: float = SEEN_AT) -> LogWriter:
    dumps = FlightWriter(cluster, root / "fr", seed=3)
    writer = LogWriter(cluster, root / "logs", seed=3, flight=dumps)
    t = 0.0
    while t < until:
        writer.advance(t)
        t += 2.0
    writer.advance(until)
    return writer


CASES = [
    ("rank_death", {"dumps": "pickle"}, "no_dump", ""),
    ("rank_death", {"dumps": "json"}, "no_dump", ""),
    ("collective_hang", {"cause": "missing", "dumps": "pickle"}, "missing",
     f"{TRAIN}:143 in sync_gradients"),
    ("collective_hang", {"cause": "missing", "dumps": "json"}, "missing", ""),
    ("collective_hang", {"cause": "mismatch", "dumps": "pickle"}, "mismatch",
     "/workspace/llama/moe.py:88 in route_tokens"),
    ("collective_hang", {"cause": "mismatch", "dumps": "json"}, "mismatch", ""),
]


@pytest.mark.parametrize(("effect", "params", "kind", "site"), CASES)
def test_dumps_to_verdict_names_rank_group_seq_op_and_site(
        tmp_path: Path, effect: str, params: dict, kind: str, site: str) -> None:
    cluster = job(effect, **params)
    writer = run(cluster, tmp_path)
    dumps = read_dumps(writer.flight_spec, len(cluster.rank_map))
    assert not dumps.errors
    verdict = analyse_dumps(dumps)
    assert verdict.kind == kind and verdict.culprits == (CULPRIT,)
    assert verdict.group == "pg 0 (default_pg)" and verdict.group_size == 16
    assert verdict.seq == hung_seq(cluster, START)
    assert verdict.op == "nccl:all_reduce"
    assert verdict.call_site == site
    dead = effect == "rank_death"
    assert verdict.missing_dumps == ((CULPRIT,) if dead else ())
    assert verdict.waiting_call_site == (f"{TRAIN}:143 in sync_gradients"
                                         if params["dumps"] == "pickle" else "")


@pytest.mark.parametrize(("effect", "params"), [
    ("rank_death", {"dumps": "pickle"}),
    ("collective_hang", {"cause": "missing", "dumps": "pickle"}),
    ("collective_hang", {"cause": "mismatch", "dumps": "json"}),
])
def test_the_logs_and_the_dumps_agree_on_the_simulated_hang(
        tmp_path: Path, effect: str, params: dict) -> None:
    cluster = job(effect, **params)
    writer = run(cluster, tmp_path)
    rank_map = cluster.rank_map
    logs = RankLogs(writer.layout_spec)
    files = {r: logs.files(rank_map, r)[0] for r in range(len(rank_map))}
    from_logs = triage(lines_by_rank(files, rank_map, 200), len(rank_map),
                       gone=[CULPRIT] if effect == "rank_death" else [])
    joined = join_verdicts(from_logs,
                           analyse_dumps(read_dumps(writer.flight_spec, len(rank_map))))
    assert joined.sure and joined.behind == [CULPRIT] and not joined.disagreement
    assert joined.flight.seq == hung_seq(cluster, START)
    # The watchdog lines alone could not name the mismatched rank: all timed out.
    if params.get("cause") == "mismatch":
        assert from_logs.behind == []


def test_no_dump_before_the_watchdog_fires_and_none_when_off(tmp_path: Path) -> None:
    cluster = job("rank_death", dumps="pickle")
    early = run(cluster, tmp_path / "early", until=START + 29.0)
    assert not any(Path(early.flight_spec).iterdir())
    off = run(job("rank_death", dumps="none"), tmp_path / "off")
    assert not any(Path(off.flight_spec).iterdir())


def test_dumps_are_dated_when_they_land(tmp_path: Path) -> None:
    cluster = job("collective_hang", cause="missing", dumps="pickle")
    writer = run(cluster, tmp_path)
    dumps = read_dumps(writer.flight_spec, 16)
    landed = sorted(d.mtime - writer.flight._epoch for d in dumps.dumps.values())
    assert landed[0] >= START + 30.0 and landed[-1] <= START + 31.0


def work_of_one_hang(tmp_path: Path, nodes: int) -> tuple[int, int, int]:
    """(dumps written, frames the writer computed, bytes it put on disk) for one hang."""
    scenario = Scenario("fr-scale", 120.0, 1.12, 4_194_304,
                        (Fault("collective_hang", CULPRIT, START, DURATION,
                               {"cause": "mismatch", "dumps": "pickle"}),))
    cluster = SimCluster(nodes=nodes, gpus_per_node=8, seed=3, scenario=scenario)
    frames = 0
    real_frame_at = cluster.frame_at

    def counted(t: float):
        nonlocal frames
        frames += 1
        return real_frame_at(t)

    cluster.frame_at = counted  # type: ignore[method-assign]
    writer = FlightWriter(cluster, tmp_path / f"fr-{nodes}", seed=3)
    for t in (0.0, START + 29.0, START + 30.5, START + 31.5):
        writer.advance(t)
    files = list((tmp_path / f"fr-{nodes}").iterdir())
    inodes = {f.stat().st_ino: f.stat().st_size for f in files}
    return len([f for f in files if f.name.startswith("comm_lib")]), frames, sum(inodes.values())


def test_a_hangs_dumps_cost_grows_linearly_with_the_ranks(tmp_path: Path) -> None:
    small, large = work_of_one_hang(tmp_path, 8), work_of_one_hang(tmp_path, 64)  # 64, 512
    assert (small[0], large[0]) == (64, 512)
    assert large[1] == small[1]  # the hung step is worked out once per hang, not per rank
    # Every dump lists the default group's ranks: 8 times the ranks, 8 times the bytes of
    # one dump, and one copy on disk, where a copy per rank would give 64 times the bytes.
    assert large[2] / small[2] < 8 * 1.5


def test_a_later_hangs_dump_replaces_the_earlier_one_whole(tmp_path: Path) -> None:
    earlier, later = tmp_path / ".copy.0", tmp_path / ".copy.1"
    earlier.write_bytes(b"earlier hang")
    later.write_bytes(b"later hang")
    dump = tmp_path / "comm_lib_trace_rank_3"
    link_whole(earlier, dump)
    link_whole(later, dump)
    assert dump.read_bytes() == b"later hang" and dump.stat().st_ino == later.stat().st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == [".copy.0", ".copy.1", dump.name]


def test_a_copy_with_as_many_names_as_the_disk_allows_is_copied_again(tmp_path: Path,
                                                                      monkeypatch) -> None:
    """ext4 gives a file at most 65,000 names: a 100,000-rank hang needs a second copy."""
    names: dict[int, int] = {}
    real_link = flight_writer.os.link

    def link(source, target) -> None:
        inode = os.stat(source).st_ino
        if names.get(inode, 1) >= 10:
            raise OSError(errno.EMLINK, "Too many links")
        real_link(source, target)
        names[inode] = names.get(inode, 1) + 1

    monkeypatch.setattr(flight_writer.os, "link", link)
    written, _, _ = work_of_one_hang(tmp_path, 8)
    dumps = list((tmp_path / "fr-8").glob("comm_lib_trace_rank_*"))
    assert written == 64 and len({d.stat().st_ino for d in dumps}) <= 64 // 9 + 2
    assert len({d.read_bytes() for d in dumps}) == 2  # the waiting ranks' and the culprit's
