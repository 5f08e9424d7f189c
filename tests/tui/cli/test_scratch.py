"""ranktop's own folders go at exit, and a large one does not hold the exit up: what is
left of it is removed by a process that outlives ranktop."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ranktop.tui.cli import scratch
from ranktop.tui.cli.scratch import remove_soon, scratch_folder


def test_a_small_folder_is_gone_when_the_block_ends(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with scratch_folder("ranktop-demo-") as folder:
        (Path(folder) / "logs" / "node-1").mkdir(parents=True)
        (Path(folder) / "logs" / "node-1" / "stdout.log").write_text("step 1\n")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_slow_to_remove_is_left_to_a_process_of_its_own(tmp_path, monkeypatch):
    folder = tmp_path / "ranktop-demo-x"
    (folder / "logs").mkdir(parents=True)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    slow_bin = tmp_path / "bin"
    slow_bin.mkdir()
    (slow_bin / "rm").write_text(f'#!/bin/sh\nread go < "{gate}"\nexec /bin/rm "$@"\n')
    (slow_bin / "rm").chmod(0o755)  # an rm that waits for the test to let it go
    monkeypatch.setenv("PATH", f"{slow_bin}{os.pathsep}{os.environ['PATH']}")
    started: list[subprocess.Popen] = []
    real_popen = subprocess.Popen
    monkeypatch.setattr(scratch.subprocess, "Popen",
                        lambda *a, **k: started.append(real_popen(*a, **k)) or started[-1])

    remove_soon(str(folder), wait=0.01)
    assert folder.exists()  # not waited for
    with open(gate, "w") as let_go:
        let_go.write("go\n")
    assert started[0].wait(30) == 0 and not folder.exists()


def test_a_folder_asked_twice_is_removed_once(tmp_path, monkeypatch):
    started: list[list[str]] = []
    real_popen = subprocess.Popen
    monkeypatch.setattr(scratch.subprocess, "Popen",
                        lambda args, **k: started.append(args) or real_popen(args, **k))
    folder = tmp_path / "ranktop-demo-y"
    folder.mkdir()
    remove_soon(str(folder))
    remove_soon(str(folder))  # the exit's cleanups, then the end of the block
    assert len(started) == 1 and not folder.exists()
