"""A rank's logs of several torchrun attempts, on the tree real agents wrote
(``torchrun_real``): the old process's end, a marker, the new process; the newest
checkpoint line wherever it is; hang triage judging the newest attempt only."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ranktop.tui.core.hang.triage import HangScan
from ranktop.tui.core.model import RankMap
from ranktop.tui.logs import merged
from ranktop.tui.logs.attempts import attempt_groups, attempt_number, marker
from ranktop.tui.logs.merged import MergedLog
from ranktop.tui.logs.rank_logs import RankLogs
from ranktop.tui.logs.tail import FileLog

REAL = Path(__file__).parent / "torchrun_real" / "logs"
JOB = RankMap.grid(["gpu-node-001", "gpu-node-002"], 4, source="test")
SPEC = f"torchrun:{REAL / 'node0'}"


def texts(lines) -> list[str]:
    return [line.text for line in lines]


def test_attempt_numbers_and_groups() -> None:
    paths = [Path("r/attempt_1/3/stderr.log"), Path("r/attempt_0/3/stdout.log"),
             Path("r/attempt_1/3/stdout.log"), Path("r/attempt_10/3/stdout.log")]
    assert [attempt_number(path) for path in paths] == [1, 0, 1, 10]
    assert attempt_number(Path("logs/rank3.log")) is None
    assert attempt_groups(paths) == [(0, [1]), (1, [0, 2]), (10, [3])]
    assert attempt_groups(paths[:1] + paths[2:3]) == [(None, [0, 1])]  # one attempt: no split
    assert attempt_groups([]) == []


def test_the_killed_rank_shows_its_end_then_the_marker_then_its_restart() -> None:
    paths = RankLogs(SPEC).files(JOB, 5)[0]
    log = MergedLog([FileLog(path) for path in paths])
    shown = texts(log.tail(200))
    at = shown.index(marker(1))
    assert shown[at - 1] == "rank 5 about to be killed"  # the dead process's last line
    assert shown[at + 1] == "rank 5 restart 1 resuming from step 20"
    assert shown[0] == "rank 5 restart 0 resuming from step 0"
    assert shown.count(marker(1)) == 1 and shown[-1] == "saved checkpoint at step 80"
    log.close()


def test_a_peers_crash_ends_its_attempt_when_written_last(tmp_path: Path) -> None:
    run = tmp_path / "node1"
    shutil.copytree(REAL / "node1", run)
    first = next(run.glob("*/attempt_0/0"))
    os.utime(first / "stdout.log", (1000, 1000))  # the steps, then the crash on stderr
    os.utime(first / "stderr.log", (2000, 2000))
    paths = RankLogs(f"torchrun:{run}").files(JOB, 4)[0]
    shown = texts(MergedLog([FileLog(path) for path in paths]).tail(200))
    at = shown.index(marker(1))
    assert "Connection closed by peer" in shown[at - 1]
    assert shown[at - 2].startswith("[rank4]:")
    assert shown.index("step 25 loss 0.0385") < at - 2


def test_triage_lines_hold_every_attempt_with_the_marker() -> None:
    lines = RankLogs(SPEC).triage_lines(JOB)
    assert sorted(lines) == list(range(8))
    for rank, own in lines.items():
        assert own.count(marker(1)) == 1
        assert own[own.index(marker(1)) + 1] == f"rank {rank} restart 1 resuming from step 20"


def test_the_checkpoint_of_attempt_0_is_found_just_after_a_restart(tmp_path: Path) -> None:
    """Right after the restart, the new attempt has saved nothing yet: attempt_0's last
    save is the job's checkpoint."""
    root = tmp_path / "logs"
    shutil.copytree(REAL, root)
    for stdout in root.glob("*/*/attempt_1/*/stdout.log"):
        stdout.write_text("\n".join(stdout.read_text().splitlines()[:3]) + "\n")
    scan = HangScan(len(JOB))
    scan.add(RankLogs(f"torchrun:{root}").triage_lines(JOB))
    assert scan.checkpoint is not None
    assert (scan.checkpoint.step, scan.checkpoint.line) == (20, "saved checkpoint at step 20")


def test_triage_judges_the_newest_attempt_only() -> None:
    """attempt_0 ends in gloo's errors of the death; attempt_1 ran on to its end."""
    lines = RankLogs(SPEC).triage_lines(JOB)
    scan = HangScan(len(JOB))
    scan.add(lines)
    assert scan.verdict() is None
    before = HangScan(len(JOB))
    before.add({rank: own[:own.index(marker(1))] for rank, own in lines.items()})
    assert before.verdict() is not None  # what the marker keeps out


def test_a_restart_while_the_rank_is_followed_shows_with_its_marker(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(merged, "REFIND_SECONDS", 0.0)
    root = tmp_path / "logs"
    shutil.copytree(REAL, root)
    later = tmp_path / "later"
    for attempt in root.glob("*/*/attempt_1"):  # the restart has not happened yet
        shutil.move(attempt, later / attempt.relative_to(root))
    [log], _ = RankLogs(f"torchrun:{root / 'node1'}").open(JOB, 5)
    assert texts(log.tail(200))[-1] == "rank 5 about to be killed"
    assert log.follow() == []
    for attempt in later.glob("*/*/attempt_1"):
        shutil.move(attempt, root / attempt.relative_to(later))
    shown = texts(log.follow())
    assert shown[:2] == [marker(1), "rank 5 restart 1 resuming from step 20"]
    assert shown[-1] == "saved checkpoint at step 80"
    assert log.follow() == []
    log.close()


def test_files_are_looked_for_again_only_now_and_then(tmp_path: Path) -> None:
    now = [0.0]
    asked: list[float] = []
    first = tmp_path / "r" / "attempt_0" / "0" / "stdout.log"
    first.parent.mkdir(parents=True)
    first.write_text("step 1\n")

    def refind() -> list[Path]:
        asked.append(now[0])
        return [first]

    log = MergedLog([FileLog(first)], refind, clock=lambda: now[0])
    log.tail(10)
    for now[0] in (1.0, 4.0, 5.0, 6.0, 10.5):
        log.follow()
    assert asked == [5.0, 10.5]


REJOIN = Path(__file__).parent / "torchrun_real_rejoin"


def test_a_node_restarted_in_attempt_0_again_keeps_only_its_new_round() -> None:
    """The surviving node's agent restarted its workers in attempt_0 again (see the
    fixture's README): its ranks have one attempt, the dead rank's node two."""
    logs = RankLogs(f"torchrun:{REJOIN / 'logs' / 'node0'}")
    files = {rank: logs.files(JOB, rank)[0] for rank in range(8)}
    assert all(files.values())
    assert {attempt_number(path) for rank in range(4) for path in files[rank]} == {0}
    assert {attempt_number(path) for path in files[5]} == {0, 1}
    first = texts(MergedLog([FileLog(path) for path in files[1]]).tail(200))
    assert first[0] == "rank 1 restart 0 resuming from step 3" and marker(1) not in first


def test_the_agents_console_still_holds_the_round_its_files_lost() -> None:
    consoles = RankLogs(f"{REJOIN / 'console'}/node{{node_rank}}.log").triage_lines(JOB)
    resumed = [line for line in consoles[1] if "resuming" in line]
    assert resumed == ["[default1]:rank 1 restart 0 resuming from step 0",
                       "[default1]:rank 1 restart 0 resuming from step 3"]
