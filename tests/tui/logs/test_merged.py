"""A rank's files read as one log in time order: stderr, stdout and rotated predecessors."""

from __future__ import annotations

from pathlib import Path

import pytest
from ranktop.tui.logs.merged import MergedLog
from ranktop.tui.logs.rank_logs import RankLogs
from ranktop.tui.logs.tail import FileLog
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.log_writer import LogWriter
from ranktop.tui.simulator.scenario import load_scenario

SHIPPED = load_scenario(Path(__file__).resolve().parents[3] / "config" / "scenario.toml")
DEAD = 455 % 16  # the scenario's ranks wrap onto a 4 x 4 cluster
CRASH_END = "terminate called after throwing an instance of 'c10::DistBackendError'"


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def texts(log: MergedLog) -> list[str]:
    return [line.text for line in log.tail(100)]


def test_lines_of_two_files_interleave_by_their_stamps(tmp_path: Path) -> None:
    err = write(tmp_path / "stderr.log", [
        "2026-03-14 02:00:05,000 WARNING slow step",
        "[E0314 02:00:25.000000 x.cpp:1] watchdog fired",
        "  a traceback line",
    ])
    out = write(tmp_path / "stdout.log", [
        "2026-03-14 02:00:00,000 [rank 0] step 1",
        "2026-03-14 02:00:10,000 [rank 0] step 2",
        "2026-03-14 02:00:30,000 [rank 0] step 3",
    ])
    log = MergedLog([FileLog(err), FileLog(out)])
    assert texts(log) == [
        "2026-03-14 02:00:00,000 [rank 0] step 1",
        "2026-03-14 02:00:05,000 WARNING slow step",
        "2026-03-14 02:00:10,000 [rank 0] step 2",
        "[E0314 02:00:25.000000 x.cpp:1] watchdog fired",
        "  a traceback line",  # stays with the line before it
        "2026-03-14 02:00:30,000 [rank 0] step 3",
    ]
    assert [line.origin for line in log.tail(100)][:2] == ["stdout.log", "stderr.log"]


def test_a_file_without_stamps_comes_first_and_each_file_keeps_its_order(tmp_path: Path
                                                                        ) -> None:
    plain = write(tmp_path / "stdout.log", ["step 1", "step 2"])
    dated = write(tmp_path / "stderr.log", [
        "NCCL INFO before any stamp",
        "2026-03-14 02:00:10,000 ten",
        "2026-03-14 02:00:05,000 five, written after ten",
    ])
    log = MergedLog([FileLog(dated), FileLog(plain)])
    assert texts(log) == ["step 1", "step 2", "NCCL INFO before any stamp",
                          "2026-03-14 02:00:10,000 ten",
                          "2026-03-14 02:00:05,000 five, written after ten"]


def test_lines_followed_later_are_merged_too(tmp_path: Path) -> None:
    err = write(tmp_path / "stderr.log", ["2026-03-14 02:00:00,000 start"])
    out = write(tmp_path / "stdout.log", ["2026-03-14 02:00:01,000 step 1"])
    log = MergedLog([FileLog(err), FileLog(out)])
    log.tail(10)
    with out.open("a") as f:
        f.write("2026-03-14 02:00:05,000 step 2\n")
    with err.open("a") as f:
        f.write("  undated, after the start\n2026-03-14 02:00:08,000 crash\n"
                "  undated, after the crash\n")
    assert [line.text for line in log.follow()] == [
        "  undated, after the start", "2026-03-14 02:00:05,000 step 2",
        "2026-03-14 02:00:08,000 crash", "  undated, after the crash"]


def dead_rank_log(root: Path, until: float) -> list[str]:
    """The dead rank's log as the rank screen reads it, the job's logs written to ``until``."""
    cluster = SimCluster(nodes=4, gpus_per_node=4, seed=0, scenario=SHIPPED)
    writer = LogWriter(cluster, root)
    t = 0.0
    while t < until:
        writer.advance(t)
        t += 2.0
    writer.advance(until)
    logs, _ = RankLogs(writer.layout_spec).open(cluster.rank_map, DEAD)
    return [line.text for log in logs for line in log.tail(300)]


@pytest.mark.parametrize("until", [200.0, 215.0])  # before and after logrotate's copytruncate
def test_the_dead_rank_s_log_ends_on_its_crash(tmp_path: Path, until: float) -> None:
    lines = [text for text in dead_rank_log(tmp_path, until)
             if not text.startswith("[ranktop: ")]  # its marks of a rotation
    assert lines[-1] == CRASH_END, lines[-8:]
    crash = next(i for i, text in enumerate(lines) if "Cuda failure" in text)
    assert any(" step " in text for text in lines[:crash])
    assert not any(" step " in text for text in lines[crash:])


def test_lines_of_one_file_alone_still_place_what_follows_them(tmp_path: Path) -> None:
    err = write(tmp_path / "stderr.log", ["2026-03-14 02:00:00,000 start"])
    out = write(tmp_path / "stdout.log", ["2026-03-14 02:00:01,000 step 1"])
    log = MergedLog([FileLog(err), FileLog(out)])
    log.tail(10)
    with err.open("a") as f:
        f.write("2026-03-14 02:00:08,000 crash\n")
    assert [line.text for line in log.follow()] == ["2026-03-14 02:00:08,000 crash"]
    with err.open("a") as f:
        f.write("  undated, after the crash\n")
    with out.open("a") as f:
        f.write("2026-03-14 02:00:05,000 step 2\n")
    assert [line.text for line in log.follow()] == [
        "2026-03-14 02:00:05,000 step 2", "  undated, after the crash"]
