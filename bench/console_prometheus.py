"""The console itself against a real Prometheus at scale, for minutes: its memory (the UI
process and the engine's) and what its header says, sampled as it runs.

    .venv/bin/python bench/console_prometheus.py --ranks 16384 --minutes 10
    .venv/bin/python bench/console_prometheus.py --ranks 512 --minutes 2 --every 10

`ranktop simulate` and a Debian `prometheus` scraping it (as `scale_prometheus.py` starts
them, without recording rules), then `ranktop --prometheus URL` in a 120x40 tmux pane.
Every ``--every`` seconds: the resident memory of the console's processes (the UI, and the
engine it starts apart) from /proc, the machine's load, and the header's two lines as the
pane shows them. The last sample's screen is printed whole.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_prometheus import ROOT, serving

SESSION = "ranktop-bench-console"


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            children = []
        todo.extend(int(child) for child in children)
    return found


def pane(command: str) -> str:
    return subprocess.run(["tmux", *command.split()], capture_output=True, text=True,
                          check=False).stdout


def console_processes(shell: int) -> list[tuple[int, str]]:
    """The ranktop processes under the pane, each with what it is (ui or engine)."""
    found = []
    for pid in descendants(shell):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "resource_tracker" in args:
            continue  # multiprocessing's own helper, not the console
        if "spawn_main" in args:
            found.append((pid, "engine"))
        elif "ranktop" in args:
            found.append((pid, "ui"))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=16384)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--every", type=float, default=30.0)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("console_prometheus: needs tmux")
    ranktop = str(ROOT / ".venv" / "bin" / "ranktop")
    with serving(args.ranks) as (url, ranks):
        print(f"{ranks:,} ranks, Prometheus {url}; console for {args.minutes:g} min",
              flush=True)
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True,
                       check=False)
        subprocess.run(["tmux", "new-session", "-d", "-s", SESSION, "-x", "120", "-y", "40",
                        f"{ranktop} --prometheus {url}"], check=True, cwd=ROOT)
        shell = int(pane(f"display-message -p -t {SESSION} #{{pane_pid}}").strip())
        began = time.monotonic()
        print("| min | UI MB | engine MB | total MB | load | header |\n|---|---|---|---|---|---|")
        try:
            while time.monotonic() - began < args.minutes * 60:
                time.sleep(args.every)
                _sample(shell, began)
        finally:
            print("\n" + pane(f"capture-pane -p -t {SESSION}"))
            subprocess.run(["tmux", "kill-session", "-t", SESSION], check=False)


def _sample(shell: int, began: float) -> None:
    processes = console_processes(shell)
    ui = sum(rss_mb(pid) for pid, kind in processes if kind == "ui")
    engine = sum(rss_mb(pid) for pid, kind in processes if kind == "engine")
    header = " / ".join(line.strip() for line in
                        pane(f"capture-pane -p -t {SESSION}").splitlines()[:2])
    load = os.getloadavg()[0]
    minutes = (time.monotonic() - began) / 60
    print(f"| {minutes:.1f} | {ui:.0f} | {engine:.0f} | {ui + engine:.0f} | {load:.1f} | "
          f"{header} |", flush=True)


if __name__ == "__main__":
    main()
