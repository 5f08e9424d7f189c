"""The analysis of one poll at scale: time per ``Analyser.analyse`` and how many medians of
a whole metric it takes.

    .venv/bin/python bench/analysis.py [--ranks 16384] [--polls 30]

Frames come from the simulator (computed beforehand, so only the analysis is timed); the
first polls warm the detectors up and are not counted. The CPU time of the analysing thread
is printed beside the wall time: on a shared machine it is the steadier of the two.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.core import metrics as core_metrics
from ranktop.tui.core.analysis import Analyser
from ranktop.tui.core.model import Health, SourceStatus
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.scenario import load_scenario

POLL = 2.0
WARMUP = 5


def count_whole_medians(n_ranks: int) -> list[int]:
    """Wraps ``statistics.median`` where the core calls it; counts those over many values."""
    counts = [0]
    modules = [m for m in list(sys.modules.values())
               if m and getattr(m, "__name__", "").startswith("ranktop.tui.core")
               and getattr(m, "median", None) is statistics.median]

    def counted(values):
        values = list(values)
        if len(values) > n_ranks // 2:
            counts[0] += 1
        return statistics.median(values)

    for module in modules:
        module.median = counted
    assert core_metrics in modules
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=16_384)
    parser.add_argument("--polls", type=int, default=30)
    args = parser.parse_args()
    settings = load_settings(environ={})
    cluster = SimCluster(args.ranks // 8, 8, 7, load_scenario())
    frames = [cluster.frame_at(i * POLL) for i in range(args.polls)]
    status = SourceStatus("bench", Health.OK, 0.0)
    analyser = Analyser(settings, "bench")
    times, cpu = [], []
    for i, frame in enumerate(frames):
        start, start_cpu = time.perf_counter(), time.thread_time()
        analyser.analyse(frame, status, cluster.rank_map)
        if i >= WARMUP:
            times.append(time.perf_counter() - start)
            cpu.append(time.thread_time() - start_cpu)
    counts = count_whole_medians(args.ranks)
    analyser.analyse(cluster.frame_at(args.polls * POLL), status, cluster.rank_map)
    print(f"{args.ranks:,} ranks, {len(times)} polls: analyse median "
          f"{statistics.median(times) * 1e3:.1f} ms (CPU {statistics.median(cpu) * 1e3:.1f} ms),"
          f" min {min(times) * 1e3:.1f} ms (CPU {min(cpu) * 1e3:.1f} ms); medians over the"
          f" whole job per poll: {counts[0]}")


if __name__ == "__main__":
    main()
