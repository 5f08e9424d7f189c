"""What replaying past moments asks of the backend: range and instant queries, counted by a
recording fake backend (no server, seconds to run).

    .venv/bin/python bench/past_queries.py

A live source an hour into a job (4 ranks, rank 3 throttling from the start, so that a
replay looks further back for where its anomaly began) polls once; then a late start's
catch-up, the scrubbing keys, and replays whose kept frames are gone, each counted. The
engine's bounds (frames kept, frames replayed, analysers kept, a window's moments) are
scaled to what they are at 4,096 ranks, where the frames of a replay's window no longer
all fit. Results: bench/results.md.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp()

from ranktop.tui.core.analysis import Analyser  # noqa: E402
from ranktop.tui.engine import past_frames, replay  # noqa: E402
from ranktop.tui.engine.replay import Replay  # noqa: E402
from ranktop.tui.settings.config import load_settings  # noqa: E402
from ranktop.tui.sources.prometheus import past as prom_past  # noqa: E402
from ranktop.tui.sources.prometheus.client import Sample  # noqa: E402
from ranktop.tui.sources.prometheus.source import PrometheusSource  # noqa: E402

from tests.tui.sources.prometheus.test_past import HistoryClient  # noqa: E402

START = 1_800_000_000.0
NOW = START + 3600.0
RANKS_MIMICKED, METRICS = 4096, 20
HOSTS = ("h0", "h1")


def dcgm(rank: int, value: float, **extra: str) -> Sample:
    labels = {"gpu": str(rank % 2), "UUID": f"GPU-{rank}", "Hostname": HOSTS[rank // 2],
              **extra}
    return Sample(labels, value, START)


def job(rank: int, value: float) -> Sample:
    labels = {"rank": str(rank), "hostname": HOSTS[rank // 2], "local_rank": str(rank % 2),
              "gpu_uuid": f"GPU-{rank}", "training_job": "j"}
    return Sample(labels, value, START)


def history(moment: float) -> dict[str, list[Sample]]:
    return {
        "metric:temperature": [*(dcgm(r, 60.0 + r) for r in range(3)), dcgm(3, 95.0),
                               Sample({"ranktop_fresh": "newest"}, moment - 1, START)],
        "metric:throttle_reasons": [dcgm(r, 64.0 if r == 3 else 0.0) for r in range(4)],
        "metric:sm_active": [dcgm(r, 88.0, ranktop_way="0") for r in range(4)],
        "metric:step_time": [job(r, 1.1) for r in range(4)],
        "metric:compute_time": [job(r, 0.8 + r / 10) for r in range(4)],
        "job:step": [Sample({}, 1234.0 + moment - START, moment)],
    }


def recording() -> HistoryClient:
    """The tests' fake backend with this job's history, an hour in: it answers each query at
    any moment, and lists the range and instant queries it was asked."""
    client = HistoryClient(history)
    client.now = NOW
    return client


def main() -> None:
    scale = 4 * 5 / (RANKS_MIMICKED * METRICS)  # this job's values a frame, against theirs
    past_frames.FRAME_VALUES_KEPT = int(past_frames.FRAME_VALUES_KEPT * scale)
    replay.REPLAY_VALUES = int(replay.REPLAY_VALUES * scale)
    replay.KEPT_VALUES = int(replay.KEPT_VALUES * scale)
    sized = prom_past.window_steps  # windows as long as they may be at 4,096 ranks
    prom_past.window_steps = lambda ranks, queries: sized(RANKS_MIMICKED, queries)
    settings = load_settings(overrides={"prometheus": {"url": "http://prom:9090", "job": "j"}},
                             environ={})
    client = recording()
    client.references.append(PrometheusSource(settings, client=client))
    live = PrometheusSource(settings, client=client, clock=lambda: client.now)
    client.references.append(live)
    live.poll_now()
    print(f"a poll: {len(live.queries())} queries ({len(settings.metrics)} metrics)")
    scrubbed = Replay(settings, live)

    def fresh(triage):
        return Analyser(settings, "j", None, triage)

    steps = [
        ("a late start's catch-up", lambda: Replay(settings, live).bring(fresh, NOW - 2)),
        ("< (a minute back)", lambda: scrubbed.at(NOW - 60)),
        (", (a refresh back)", lambda: scrubbed.at(NOW - 62)),
        ("< again", lambda: scrubbed.at(NOW - 122)),
        ("{ (ten minutes back, a longer look)", lambda: scrubbed.at(NOW - 722)),
        (", its frames gone (a new replay)", lambda: Replay(settings, live).at(NOW - 64)),
        ("< its frames gone (a new replay)", lambda: Replay(settings, live).at(NOW - 124)),
    ]
    print("| what | range queries | instant queries |\n|---|---:|---:|")
    for what, step in steps:
        client.ranged.clear()
        client.instants.clear()
        step()
        print(f"| {what} | {len(client.ranged)} | {len(client.instants)} |")


if __name__ == "__main__":
    main()
