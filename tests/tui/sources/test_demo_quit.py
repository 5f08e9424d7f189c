"""The demo source never waits for its simulated logs: a write in progress (at 100,000
ranks the first one creates 300,000 files, a hang 100,000 dumps) ends at its next file when
the source closes, ``close`` returns even while a file's write is stuck, and a poll draws its
frame beside it."""

from __future__ import annotations

import threading
from pathlib import Path

from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.log_writer import LogWriter
from ranktop.tui.simulator.scenario import load_scenario
from ranktop.tui.sources import demo
from ranktop.tui.sources.demo import DemoSource


def stuck_source(tmp_path: Path, monkeypatch) -> tuple[DemoSource, threading.Event,
                                                     threading.Event, list[int]]:
    """A demo source whose first log write is stuck at the fourth rank's files until
    ``release`` is set; ``after`` lists the files asked for after that."""
    cluster = SimCluster(4, 8, 7, load_scenario())
    writer = LogWriter(cluster, tmp_path / "logs", seed=7)
    source = DemoSource(cluster, clock=lambda: 100.0, started=0.0, log_writer=writer,
                        wait_for_logs=False)  # as the live demo: a poll never waits long
    monkeypatch.setattr(demo, "CLOSE_WAIT_SECONDS", 0.05, raising=False)
    stuck, release = threading.Event(), threading.Event()
    after: list[int] = []
    real_file = writer._file

    def slow_file(rank: int, stream: str) -> Path:
        if rank == 3 and not stuck.is_set():  # a disk that hangs
            stuck.set()
            release.wait(60)
        elif release.is_set():
            after.append(rank)
        return real_file(rank, stream)

    monkeypatch.setattr(writer, "_file", slow_file)
    source._write_logs(100.0)  # the first write, in a thread of its own, holding the lock
    assert stuck.wait(30)
    return source, stuck, release, after


def test_close_returns_while_the_simulator_holds_its_lock(tmp_path: Path, monkeypatch):
    source, _, release, after = stuck_source(tmp_path, monkeypatch)
    try:
        closing = threading.Thread(target=source.close, daemon=True)
        closing.start()
        closing.join(30)  # returns at once unless close waits for the stuck write
        assert not closing.is_alive()
    finally:
        release.set()
    assert source._log_lock.acquire(timeout=30)  # the write ended ...
    assert len(after) <= 1  # ... at its next file, not after every rank's
    assert not any((tmp_path / "logs").rglob("*.log"))


def test_a_poll_draws_its_frame_beside_a_write_that_takes_long(tmp_path: Path, monkeypatch):
    source, _, release, _ = stuck_source(tmp_path, monkeypatch)
    frames = []
    try:
        polling = threading.Thread(target=lambda: frames.append(source._read(102.0)),
                                   daemon=True)
        polling.start()
        polling.join(30)  # returns at once unless the poll waits for the stuck write
        assert not polling.is_alive() and frames[0].values
    finally:
        release.set()
    source.flush_logs()  # the skipped poll's lines come with the next write
    assert any((tmp_path / "logs").rglob("*.log"))
