"""The demo's per-rank log files: torchrun's layout, and the lines each scripted fault writes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from ranktop.tui.core.hang.triage import HangScan, parse_watchdog, triage
from ranktop.tui.simulator import log_writer as simlogs
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.log_writer import RESTART_MARKER, LogWriter
from ranktop.tui.simulator.scenario import Fault, Scenario, load_scenario

SHIPPED = load_scenario(Path(__file__).resolve().parents[3] / "config" / "scenario.toml")
DEAD = 455 % 16  # the scenario's ranks wrap onto a 4 x 4 cluster
NVLINK_NODE = (300 % 16) // 4
SUFFIX = re.compile(r"llama-70b-pretrain_[a-z0-9_]{8}")
WARN_2_26 = re.compile(
    r"\n\n\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] (?P<host>[\w-]+):(?P<pid>\d+):\d+ \[(?P<dev>\d+)\]"
    r" \S+:\d+ NCCL WARN (?P<msg>.*)\n"
)
PROGRESS = re.compile(
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} "
    r"\[rank (\d+)\] step (\d+) loss \d+\.\d{3} step_time \d+\.\d\ds tokens/s \d\.\d\de6"
)


def small(seed: int = 0) -> SimCluster:
    return SimCluster(nodes=4, gpus_per_node=4, seed=seed, scenario=SHIPPED)


def run(writer: LogWriter, until: float, start: float = 0.0, every: float = 2.0) -> None:
    t = start
    while t < until:
        writer.advance(t)
        t += every
    writer.advance(until)


def logs(writer: LogWriter, stream: str = "stderr") -> dict[int, str]:
    """Each rank's file, found the way the layout promises: host, then local rank."""
    found = {}
    for rank in writer.cluster.rank_map.ranks:
        (attempt,) = (writer.root / rank.host).glob("*/attempt_0")
        found[rank.rank] = (attempt / str(rank.gpu) / f"{stream}.log").read_text()
    return found


def history(writer: LogWriter, stream: str = "stderr") -> dict[int, str]:
    """Each rank's whole log: its rotated copies, oldest first, then the live file."""
    found = {}
    for rank in writer.cluster.rank_map.ranks:
        (attempt,) = (writer.root / rank.host).glob("*/attempt_0")
        live = attempt / str(rank.gpu) / f"{stream}.log"
        copies = sorted(live.parent.glob(f"{stream}.log.*"), key=lambda p: -int(p.suffix[1:]))
        found[rank.rank] = "".join(p.read_text() for p in [*copies, live])
    return found


def sizes(root: Path) -> dict[Path, int]:
    return {path: path.stat().st_size for path in root.rglob("*.log*")}


@pytest.fixture(scope="module")
def hung(tmp_path_factory) -> LogWriter:
    """A 16-rank job's logs up to 205 s: the dead rank's failure and everyone's watchdog."""
    writer = LogWriter(small(), tmp_path_factory.mktemp("hung"))
    run(writer, 205.0)
    return writer


# --- layout and determinism ----------------------------------------------------------------

def test_torchrun_layout_one_tree_per_host(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    assert writer.layout_spec == f"torchrun:{tmp_path}"
    assert not any(tmp_path.iterdir())  # nothing until the first advance
    writer.advance(0.0)
    hosts = sorted(p.name for p in tmp_path.iterdir())
    assert hosts == ["gpu-node-000", "gpu-node-001", "gpu-node-002", "gpu-node-003"]
    suffixes = set()
    for host in hosts:
        (run_dir,) = (tmp_path / host).iterdir()
        assert SUFFIX.fullmatch(run_dir.name)
        suffixes.add(run_dir.name)
        assert [p.name for p in run_dir.iterdir()] == ["attempt_0"]
        locals_ = sorted(p.name for p in (run_dir / "attempt_0").iterdir())
        assert locals_ == ["0", "1", "2", "3"]
        for local in locals_:
            names = sorted(p.name for p in (run_dir / "attempt_0" / local).iterdir())
            assert names == ["stderr.log", "stdout.log"]
    assert len(suffixes) == 4  # each node's torchrun picks its own


def test_run_id_names_the_run_directory(tmp_path: Path) -> None:
    LogWriter(small(), tmp_path, run_id="job-81234").advance(0.0)
    assert re.fullmatch(r"job-81234_[a-z0-9_]{8}", next((tmp_path / "gpu-node-000").iterdir()).name)


def test_on_kubernetes_each_pod_writes_its_own_tree(tmp_path: Path) -> None:
    LogWriter(small(), tmp_path, tree=lambda node: f"job-worker-{node}").advance(0.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"job-worker-{n}" for n in range(4)]
    assert len(list((tmp_path / "job-worker-2").glob("*/attempt_0/3/stderr.log"))) == 1


def test_same_seed_same_files_however_often_polled(tmp_path: Path) -> None:
    writers = [LogWriter(small(), tmp_path / name) for name in ("a", "b", "c")]
    run(writers[0], 230.0, every=2.0)
    run(writers[1], 230.0, every=0.7)
    writers[2].advance(0.0)
    writers[2].advance(230.0)
    contents = [{p.relative_to(w.root): p.read_bytes() for p in w.root.rglob("*.log*")}
                for w in writers]
    assert contents[0] == contents[1] == contents[2]
    assert any(p.name == "stderr.log.1" for p in contents[0])  # the rotations are in it


def test_another_seed_other_directories_and_pids(tmp_path: Path) -> None:
    a, b = LogWriter(small(), tmp_path / "a", seed=0), LogWriter(small(), tmp_path / "b", seed=1)
    a.advance(0.0)
    b.advance(0.0)
    assert {p.name for p in (a.root / "gpu-node-000").iterdir()} != {
        p.name for p in (b.root / "gpu-node-000").iterdir()}
    assert logs(a)[0] != logs(b)[0]


# --- healthy running -----------------------------------------------------------------------

def test_nccl_init_lines_map_rank_to_host_pid_and_device(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    writer.advance(0.0)
    pids = set()
    for rank, text in logs(writer).items():
        host, gpu = writer.cluster.rank_map.ranks[rank].host, rank % 4
        complete = re.search(
            rf"^{host}:(\d+):\1 \[{gpu}\] NCCL INFO ncclCommInitRankConfig comm 0x[0-9a-f]+ rank"
            rf" {rank} nranks 16 cudaDev {gpu} nvmlDev {gpu} busId [0-9a-f]+000 commId"
            r" (0x[0-9a-f]+) - Init COMPLETE$", text, re.M)
        assert complete, text
        pids.add(complete.group(1))
        assert ("NCCL INFO NCCL version 2.27.3+cuda12.9" in text) == (rank == 0)
        assert "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB" in text
    assert len(pids) == 16


def test_progress_on_stdout_every_twenty_seconds(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 41.0)
    for rank, text in logs(writer, "stdout").items():
        lines = text.splitlines()
        assert all(PROGRESS.match(line) for line in lines), lines
        assert len(lines) in ((4, 5) if rank == 0 else (2, 3))
        steps = [int(PROGRESS.match(line).group(2)) for line in lines]
        assert steps == sorted(steps) and steps[-1] <= writer.cluster.frame_at(41.0).job["step"]
    assert " lr " in logs(writer, "stdout")[0]


# --- faults --------------------------------------------------------------------------------

def test_xid_cuda_failure_on_the_failing_rank_only(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 169.9)
    assert not any("Cuda failure" in text for text in logs(writer).values())
    writer.advance(172.0)
    text = logs(writer)[DEAD]
    warn = WARN_2_26.search(text)
    assert warn and warn.group("msg") == "Cuda failure 'unspecified launch failure'"
    assert (warn.group("host"), warn.group("dev")) == ("gpu-node-001", str(DEAD % 4))
    assert "Process group watchdog thread terminated with exception: CUDA error" in text
    assert not any("Cuda failure" in t for r, t in logs(writer).items() if r != DEAD)


def test_no_watchdog_before_the_timeout(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 201.9)
    assert not any("Watchdog caught" in text for text in logs(writer).values())


def test_every_other_rank_times_out_on_the_same_seqnum(hung: LogWriter) -> None:
    seq = 4 * int(hung.cluster.frame_at(172.5).job["step"]) + 2
    for rank, text in logs(hung).items():
        reports = [r for line in text.splitlines() if (r := parse_watchdog(line))]
        if rank == DEAD:
            assert reports == []
            continue
        timeout, progress = reports
        assert (timeout.rank, timeout.seq, timeout.op, timeout.timeout_ms) == (
            rank, seq, "ALLREDUCE", 30000)
        assert 30000 < timeout.ran_ms < 31000
        assert (progress.seq, progress.last_enqueued, progress.last_completed) == (
            seq, seq, seq - 1)
        assert "Some NCCL operations have failed or timed out" in text
        assert "we are taking the entire process down" in text


def test_triage_over_the_demo_logs_finds_the_dead_rank(hung: LogWriter) -> None:
    verdict = triage({r: t.splitlines() for r, t in logs(hung).items()}, world_size=16)
    assert verdict is not None
    assert verdict.behind == [DEAD] and verdict.dead == [DEAD] and len(verdict.reporting) == 15
    assert any("Cuda failure" in line for line in verdict.evidence[DEAD])
    assert verdict.summary.startswith(f"rank {DEAD} is dead (a CUDA error in its log): 15 of 15")


def test_the_dead_rank_writes_nothing_while_dead(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 172.0)
    before = logs(writer)[DEAD], logs(writer, "stdout")[DEAD]
    run(writer, 219.9, start=172.0, every=0.5)
    # logrotate moved its files meanwhile (copytruncate), but wrote nothing new
    assert logs(writer)[DEAD] == "" and logs(writer, "stdout")[DEAD] == ""
    assert (history(writer)[DEAD], history(writer, "stdout")[DEAD]) == before
    writer.advance(221.0)
    assert logs(writer)[DEAD].endswith("- Init COMPLETE\n")  # restarted with the others


def test_after_the_restart_triage_sees_no_hang(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 222.0)
    assert triage({r: t.splitlines() for r, t in logs(writer).items()}, world_size=16) is None
    assert "resuming at step" in logs(writer, "stdout")[0]


def test_the_dead_rank_stops_writing_at_its_fatal_error(tmp_path: Path) -> None:
    """Rank 0 (progress twice every 20 s) falls off the bus at 10 s and is gone at 20 s:
    nothing it writes comes after its CUDA error."""
    death = Fault("rank_death", 0, 20.0, 30.0)
    xid = Fault("xid", 0, 10.0, 40.0, {"code": 79})

    def last_step(faults: tuple[Fault, ...], folder: str) -> tuple[int, LogWriter]:
        scenario = Scenario("short", 100.0, 1.12, 4194304, faults)
        writer = LogWriter(SimCluster(2, 2, seed=0, scenario=scenario), tmp_path / folder)
        run(writer, 45.0)
        return max(int(m.group(2)) for m in PROGRESS.finditer(logs(writer, "stdout")[0])), writer

    failed_at = SimCluster(2, 2, seed=0, scenario=Scenario(
        "short", 100.0, 1.12, 4194304, (xid, death))).frame_at(10.4).job["step"]
    after_xid, writer = last_step((xid, death), "xid")
    assert after_xid <= failed_at
    assert logs(writer)[0].endswith(
        "terminate called after throwing an instance of 'c10::DistBackendError'\n")
    without_xid, _ = last_step((death,), "plain")
    assert without_xid > failed_at  # alive until 20 s, it would have written on


def test_a_rank_dying_without_an_xid_just_stops(tmp_path: Path) -> None:
    scenario = Scenario("short", 100.0, 1.12, 4194304, (Fault("rank_death", 1, 20.0, 40.0),))
    writer = LogWriter(SimCluster(2, 2, seed=0, scenario=scenario), tmp_path)
    run(writer, 55.0)
    assert logs(writer)[1].endswith("- Init COMPLETE\n")
    assert "Cuda failure" not in logs(writer)[1]
    assert all("Watchdog caught" in text for rank, text in logs(writer).items() if rank != 1)


# --- log rotation during the hang ---------------------------------------------------------

ROTATED_COPY = 455 % 16 // 4  # the dead rank's node: copytruncate within [211, 213)
ROTATED_RENAME = (201 % 16 // 4, 201 % 16 // 4 + 1)  # two nodes: rename within [213, 217)


def rank_files(writer: LogWriter, rank: int) -> Path:
    r = writer.cluster.rank_map.ranks[rank]
    (attempt,) = (writer.root / r.host).glob("*/attempt_0")
    return attempt / str(r.gpu)


def test_nothing_rotates_before_the_window(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 210.99)
    assert not list(tmp_path.rglob("*.log.*"))


def test_copytruncate_moves_the_dead_ranks_fatal_error_to_the_copy(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 210.0)
    folder = rank_files(writer, DEAD)
    inode, before = (folder / "stderr.log").stat().st_ino, logs(writer)[DEAD]
    run(writer, 213.0, start=210.0)
    assert (folder / "stderr.log.1").read_text() == before
    assert before.endswith("terminate called after throwing an instance of "
                           "'c10::DistBackendError'\n")
    live = folder / "stderr.log"
    assert live.read_text() == "" and live.stat().st_ino == inode  # same file, truncated
    copied = {r for r in range(16) if (rank_files(writer, r) / "stderr.log.1").exists()}
    assert copied == {r for r in range(16) if r // 4 == ROTATED_COPY}


def test_rename_moves_the_watchdog_reports_to_the_old_file(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 212.9)
    nodes = ROTATED_RENAME
    ranks = [r for r in range(16) if r // 4 in nodes]
    inodes = {r: (rank_files(writer, r) / "stderr.log").stat().st_ino for r in ranks}
    run(writer, 217.0, start=212.9)
    for rank in ranks:
        folder = rank_files(writer, rank)
        old, live = folder / "stderr.log.1", folder / "stderr.log"
        assert old.stat().st_ino == inodes[rank] and live.stat().st_ino != inodes[rank]
        assert "Watchdog caught collective operation timeout" in old.read_text()
        assert live.read_text() == ""
        assert (rank_files(writer, rank) / "stdout.log.1").exists()
    untouched = [r for r in range(16) if r // 4 not in (*nodes, ROTATED_COPY)]
    assert untouched and not any(list(rank_files(writer, r).glob("*.log.*")) for r in untouched)


def test_after_the_rotations_triage_needs_the_rotated_files(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 219.0)  # still hung; every node but one rotated
    live = triage({r: t.splitlines() for r, t in logs(writer).items()}, world_size=16)
    assert live is not None and len(live.reporting) == 4  # only the unrotated node's ranks
    whole = triage({r: t.splitlines() for r, t in history(writer).items()}, world_size=16)
    assert whole is not None and whole.behind == [DEAD] and len(whole.reporting) == 15
    assert any("Cuda failure" in line for line in whole.evidence[DEAD])


def test_rotation_moments_follow_the_seed(tmp_path: Path) -> None:
    def rotated_by(seed: int, t: float) -> set[int]:
        writer = LogWriter(small(seed), tmp_path / f"{seed}-{t}", seed=seed)
        run(writer, t)
        return {r for r in range(16) if (rank_files(writer, r) / "stderr.log.1").exists()}

    # each node draws its own moment in [213, 217): by 215.5 some seeds have rotated a node
    assert len({frozenset(rotated_by(seed, 215.5)) for seed in range(6)}) > 1
    assert rotated_by(3, 215.5) == rotated_by(3, 215.5)


def test_nvlink_drop_warns_on_that_node_only(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 96.0)
    for rank, text in logs(writer).items():
        events = [m.group("msg") for m in WARN_2_26.finditer(text)]
        if rank // 4 == NVLINK_NODE:
            assert events == [f"NET/IB : mlx5_{rank % 4}:1 Got async event : port error"]
        else:
            assert events == []


def test_rank0_warns_of_slow_steps_stall_and_loss(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 60.0)
    assert "a slow rank is holding the job back" in logs(writer)[0]
    run(writer, 299.0, start=60.0)
    text = logs(writer)[0]
    assert "WARNING [rank 0] dataloader: no batch for 5.0s" in text
    assert re.search(r"WARNING \[rank 0\] loss spike at step \d+: [3-9]\.\d{3} \(was 2\.\d{3}\)",
                     text)
    assert not any("WARNING" in t for r, t in logs(writer).items() if r != 0)


def test_loop_restart_writes_a_marker_not_a_new_attempt(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 299.0)
    assert not any(RESTART_MARKER in t for t in logs(writer).values())
    writer.advance(301.0)
    for stream in ("stderr", "stdout"):
        assert all(t.count(RESTART_MARKER) == 1 for t in logs(writer, stream).values())
    assert logs(writer)[5].split(RESTART_MARKER)[1].count("Init COMPLETE") == 1
    assert {p.name for p in tmp_path.glob("*/*/attempt_*")} == {"attempt_0"}


def test_first_advance_mid_hang_backfills_this_loop_without_a_marker(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    writer.advance(300.0 + 205.0)
    texts = logs(writer)
    assert not any(RESTART_MARKER in t for t in texts.values())
    assert all(("Init COMPLETE" in t) and (("Watchdog caught" in t) == (r != DEAD))
               for r, t in texts.items())


def test_time_going_backwards_writes_nothing(tmp_path: Path) -> None:
    writer = LogWriter(small(), tmp_path)
    run(writer, 50.0)
    before = sizes(tmp_path)
    writer.advance(40.0)
    writer.advance(50.0)
    assert sizes(tmp_path) == before


# --- cost ----------------------------------------------------------------------------------

def test_at_most_one_file_open_at_a_time(tmp_path: Path, monkeypatch) -> None:
    open_now, most = 0, 0

    class Tracked:
        def __init__(self, *args, **kwargs) -> None:
            self.file = open(*args, **kwargs)  # noqa: SIM115 - closed in __exit__

        def __enter__(self):
            nonlocal open_now, most
            open_now += 1
            most = max(most, open_now)
            return self.file

        def __exit__(self, *exc) -> None:
            nonlocal open_now
            open_now -= 1
            self.file.close()

    monkeypatch.setattr(simlogs, "open", Tracked, raising=False)
    run(LogWriter(small(), tmp_path), 205.0)
    assert most == 1


def test_a_typical_poll_at_512_ranks_touches_few_files(tmp_path: Path) -> None:
    writer = LogWriter(SimCluster(64, 8, seed=0, scenario=SHIPPED), tmp_path)
    run(writer, 40.0)
    before = sizes(tmp_path)
    writer.advance(42.0)
    after = sizes(tmp_path)
    grown = {p: after[p] - before[p] for p in after if after[p] != before[p]}
    # Two seconds of progress: about a tenth of the ranks, stdout only, a line each.
    assert 20 <= len(grown) <= 80
    assert all(p.name == "stdout.log" for p in grown)
    assert sum(grown.values()) < 100 * len(grown)


def test_at_full_scale_rank_455_is_the_one_the_others_wait_for(tmp_path: Path) -> None:
    writer = LogWriter(SimCluster(64, 8, seed=0, scenario=SHIPPED), tmp_path)
    run(writer, 171.9)
    assert "Cuda failure 'unspecified launch failure'" in logs(writer)[455]
    run(writer, 203.5, start=171.9)
    texts = logs(writer)
    seqs = {r: [p.seq for line in t.splitlines() if (p := parse_watchdog(line))]
            for r, t in texts.items()}
    assert seqs[455] == []
    assert {tuple(found) for r, found in seqs.items() if r != 455} == {(seqs[0][0],) * 2}
    verdict = triage({r: t.splitlines() for r, t in texts.items()}, world_size=512)
    assert verdict is not None and verdict.behind == [455]
    assert verdict.summary.startswith("rank 455 is dead (a CUDA error in its log): 511 of 511"
                                      " live ranks timed out in ALLREDUCE SeqNum ")


def test_the_log_modules_import_no_textual() -> None:
    code = ("import sys, ranktop.tui.core.hang.triage, ranktop.tui.simulator.log_writer\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_simulate_writes_the_ranks_logs_where_asked(tmp_path):
    import subprocess
    import sys
    import time as clock

    process = subprocess.Popen(
        [sys.executable, "-m", "ranktop", "simulate", "--port", "0", "--nodes", "2",
         "--gpus-per-node", "2", "--log-dir", str(tmp_path / "logs")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = clock.monotonic() + 30
        while clock.monotonic() < deadline and not list((tmp_path / "logs").rglob("stderr.log")):
            clock.sleep(0.2)
        files = sorted((tmp_path / "logs").rglob("stderr.log"))
        assert len(files) == 4
        assert "Init COMPLETE" in files[0].read_text()
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=20)
    assert f"torchrun:{tmp_path / 'logs'}" in out


CHECKPOINT_LINE = re.compile(
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO \[rank 0\] successfully saved checkpoint from "
    r"iteration +(\d+) to /checkpoints/iter_(\d{7})\n")


def test_rank_0_logs_each_checkpoint_the_metric_shows_as_megatron_does(hung: LogWriter) -> None:
    saved = {rank: CHECKPOINT_LINE.findall(text) for rank, text in logs(hung, "stdout").items()}
    assert saved[0] == [("120100", "0120100")]  # ~118 steps by the hang, one every 100
    assert not any(saved[rank] for rank in range(1, 16))
    assert hung.cluster.frame_at(205.0).job["checkpoint_step"] == 120_100.0


def test_triage_over_the_demo_logs_reads_the_checkpoint(hung: LogWriter) -> None:
    lines = {rank: text.splitlines() for rank, text in logs(hung, "stdout").items()}
    scan = HangScan(16)
    scan.add(lines)
    assert scan.checkpoint is not None and (scan.checkpoint.step, scan.checkpoint.rank) == \
        (120_100, 0)
