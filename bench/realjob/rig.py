"""The real job's rig: a real Prometheus, two real ``torchrun`` agents, one fault, the truth.

``python -m bench.realjob run --fault death`` (from the repository root, with the
``realjob`` extra installed) runs one incident end to end:

1. a Prometheus of its own scrapes every rank's metrics each second;
2. two ``torchrun`` agents stand for two nodes (``node-a``, ``node-b``, four ranks each,
   ``--max-restarts 1``, each with its own ``--log-dir`` and ``--tee`` console) and run
   ``train.py`` with gloo and the Flight Recorder on;
3. once every rank steps and the job has trained calmly for a while, the fault lands on
   one rank, and the truth (what, on which rank, when) is written to ``truth.json``;
4. the rig watches the job through the incident, then ranktop's verdicts are checked
   against the truth (``checks.py``), and everything is stopped;
5. with ``--record NAME`` the incident is kept for CI (``record.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.realjob.faults import FAULTS, Fault
from tests.integration.cluster import free_port, instant, wait_for

HERE = Path(__file__).resolve().parent
JOB = "realjob"
HOSTS = ("node-a", "node-b")
RANKS_PER_NODE = 4
WORLD = len(HOSTS) * RANKS_PER_NODE
SCRAPE = "1s"


@dataclass(frozen=True)
class Truth:
    """What the rig did to the job, and when (Unix seconds)."""

    fault: str
    rank: int
    host: str
    pid: int
    at: float
    ended: float  # when the rig stopped watching
    world: int = WORLD
    job: str = JOB


def free_ports(count: int, first: int = 19500) -> int:
    """The first of ``count`` consecutive free ports below the ephemeral range."""
    for base in range(first, 30000, count):
        try:
            for port in range(base, base + count):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise OSError(f"no {count} consecutive free ports")


class Rig:
    """One run of the real job in ``folder``: its Prometheus, its agents, its fault."""

    def __init__(self, folder: Path, gloo_timeout: float) -> None:
        self.folder = folder
        self.gloo_timeout = gloo_timeout
        self.prometheus_port = free_port()
        self.url = f"http://127.0.0.1:{self.prometheus_port}"
        self.port_base = free_ports(WORLD)
        self.rendezvous_port = free_port()
        self.processes: list[subprocess.Popen] = []

    def start(self) -> None:
        for part in ("logs", "fr", "control", "pids"):
            (self.folder / part).mkdir(parents=True, exist_ok=True)
        self._start_prometheus()
        for host in HOSTS:
            self._start_agent(host)
        wait_for(lambda: self._stepping() == WORLD, f"{WORLD} ranks stepping", 180)

    def _start_prometheus(self) -> None:
        targets = ", ".join(f"'127.0.0.1:{self.port_base + r}'" for r in range(WORLD))
        config = self.folder / "prometheus.yml"
        config.write_text(
            f"global:\n  scrape_interval: {SCRAPE}\n  scrape_timeout: {SCRAPE}\n"
            f"scrape_configs:\n  - job_name: {JOB}\n    static_configs:\n"
            f"      - targets: [{targets}]\n"
            # the job's own metrics only: the recording stays small
            "    metric_relabel_configs:\n"
            "      - source_labels: [__name__]\n        regex: 'training_.*'\n"
            "        action: keep\n")
        log = (self.folder / "prometheus.log").open("w")
        self.processes.append(subprocess.Popen(
            ["prometheus", f"--config.file={config}",
             f"--storage.tsdb.path={self.folder / 'prometheus'}",
             f"--web.listen-address=127.0.0.1:{self.prometheus_port}"],
            stdout=log, stderr=log, start_new_session=True))
        wait_for(lambda: urllib.request.urlopen(f"{self.url}/-/ready", timeout=2).status == 200,
                 "Prometheus ready", 30)

    def _start_agent(self, host: str) -> None:
        env = dict(os.environ, RIG_DIR=str(self.folder), RIG_JOB=JOB, RIG_HOST=host,
                   RIG_PORT_BASE=str(self.port_base), RIG_TIMEOUT=str(self.gloo_timeout),
                   TORCH_FR_BUFFER_SIZE="2000",
                   TORCH_FR_DUMP_TEMP_FILE=str(self.folder / "fr" / "rank_"),
                   TORCH_DISABLE_SHARE_RDZV_TCP_STORE="1", OMP_NUM_THREADS="1",
                   PYTHONUNBUFFERED="1")
        torchrun = Path(sys.executable).with_name("torchrun")
        console = (self.folder / "logs" / f"{host}.console").open("w")
        self.processes.append(subprocess.Popen(
            [str(torchrun), "--nnodes", str(len(HOSTS)), "--nproc-per-node",
             str(RANKS_PER_NODE), "--rdzv-backend", "c10d",
             "--rdzv-endpoint", f"127.0.0.1:{self.rendezvous_port}", "--rdzv-id", JOB,
             "--max-restarts", "1", "--log-dir", str(self.folder / "logs" / host),
             "--redirects", "3", "--tee", "3", str(HERE / "train.py")],
            env=env, stdout=console, stderr=subprocess.STDOUT, start_new_session=True))

    def _stepping(self) -> int:
        result = instant(self.url, f'count(changes(training_step{{training_job="{JOB}"}}[5s]) > 0)')
        return int(float(result[0]["value"][1])) if result else 0

    def rank_place(self, rank: int) -> tuple[int, str]:
        """The pid and host of ``rank``'s current process."""
        pid = int((self.folder / "pids" / f"rank{rank}").read_text())
        series = instant(self.url, f'training_step{{training_job="{JOB}",rank="{rank}"}}')
        return pid, series[0]["metric"]["hostname"] if series else "?"

    def inject(self, fault: Fault, rank: int) -> Truth:
        pid, host = self.rank_place(rank)
        at = time.time()
        fault.start(self, pid, rank)
        return Truth(fault=fault.name, rank=rank, host=host, pid=pid, at=at, ended=at)

    def stop(self) -> None:
        """Everything down: stopped ranks woken first so that they can die."""
        for pid_file in (self.folder / "pids").glob("rank*"):
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pid_file.read_text()), signal.SIGCONT)
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def run(folder: Path, fault_name: str, rank: int, calm: float) -> Truth:
    """One incident: start, train calmly for ``calm`` seconds, inject, watch, stop."""
    fault = FAULTS[fault_name]
    rig = Rig(folder, gloo_timeout=fault.gloo_timeout)
    try:
        rig.start()
        print(f"all {WORLD} ranks step; training calmly for {calm:.0f} s", flush=True)
        time.sleep(calm)
        truth = rig.inject(fault, rank)
        print(f"{fault.name} on rank {rank} ({truth.host}, pid {truth.pid})", flush=True)
        time.sleep(fault.watch)
        fault.end(rig, truth.pid, rank)
        time.sleep(fault.after)
        truth = Truth(**{**asdict(truth), "ended": time.time()})
    finally:
        rig.stop()
    (folder / "truth.json").write_text(json.dumps(asdict(truth), indent=1) + "\n")
    return truth
