"""Detection: latency per scripted fault, false alarms per healthy hour, time per poll.

    .venv/bin/python bench/detect.py

All on the simulator, polled every 2 s of simulated time (no waiting: frames are computed).
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.core.detect.detectors import Detectors
from ranktop.tui.settings.config import load_settings
from ranktop.tui.simulator.cluster import SimCluster
from ranktop.tui.simulator.scenario import load_scenario

POLL = 2.0
# Which anomaly each scripted fault should raise (rank 300's node starts at rank 296).
EXPECTED = {
    "thermal_throttle": ("thermal", 37), "straggler": ("straggler", 201),
    "nvlink_drop": ("nvlink", 296), "ecc_dbe": ("ecc", 128), "xid": ("xid", 455),
    "rank_death": ("missing", 455), "job_stall": ("job_stall", None),
    "loss_divergence": ("loss", None),
}


def latencies(settings) -> None:
    cluster = SimCluster(64, 8, 7, load_scenario())
    detectors = Detectors(settings.detect, cluster.rank_map)
    shown: dict[tuple, list[tuple[float, float]]] = {}
    for step in range(int(cluster.scenario.loop_seconds / POLL)):
        t = step * POLL
        for anomaly in detectors.update(cluster.frame_at(t)):
            shown.setdefault(anomaly.key, []).append((t, anomaly.since))
    print("detection latency (seconds from fault start to anomaly shown, polls every 2 s):")
    for fault in cluster.scenario.faults:
        if fault.effect not in EXPECTED:  # log rotation: nothing for a detector to see
            continue
        key = EXPECTED[fault.effect]
        hits = [t for t, since in shown.get(key, []) if since >= fault.start and t < fault.end]
        latency = f"{hits[0] - fault.start:5.0f} s" if hits else "  not detected"
        print(f"  {fault.effect:<17} {key!s:<22} {latency}   (fault lasts {fault.duration:g} s)")


def false_alarms(settings, hours: float = 1.0) -> None:
    healthy = replace(load_scenario(), faults=())
    cluster = SimCluster(64, 8, 7, healthy)
    detectors = Detectors(settings.detect, cluster.rank_map)
    alarms = sum(len(detectors.update(cluster.frame_at(step * POLL)))
                 for step in range(int(hours * 3600 / POLL)))
    print(f"false alarms on a healthy 512-rank cluster: {alarms} anomaly-polls in {hours:g} "
          f"simulated hour(s)")


def time_per_poll(settings, nodes: int, polls: int = 40) -> None:
    cluster = SimCluster(nodes, 8, 7, load_scenario())
    frames = [cluster.frame_at(40 + step * POLL) for step in range(polls)]
    detectors = Detectors(settings.detect, cluster.rank_map)
    samples = []
    for frame in frames:
        started = time.perf_counter()
        detectors.update(frame)
        samples.append(time.perf_counter() - started)
    ordered = sorted(samples)
    print(f"detector time per poll at {nodes * 8:>6} ranks: median "
          f"{statistics.median(samples) * 1000:6.1f} ms, p90 "
          f"{ordered[int(0.9 * (len(ordered) - 1))] * 1000:6.1f} ms")


def main() -> int:
    settings = load_settings(environ={})
    latencies(settings)
    false_alarms(settings)
    for nodes in (64, 2048):
        time_per_poll(settings, nodes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
