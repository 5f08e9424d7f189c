"""Past moments against a real Prometheus: how long `Replay.at` takes, and what it asks.

    .venv/bin/python bench/past.py                   # 512 ranks, ~5 min
    .venv/bin/python bench/past.py --ranks 512 --history 200

`ranktop simulate` and a Debian `prometheus` scraping it, started as bench/scale_prometheus.py
starts them; once Prometheus holds ``--history`` seconds of the job (a replay's window is
90 s at the default 2 s refresh), the source polls once live (learning the ranks) and a
replay (the engine's ``Replay``, as `ranktop report --at` and the console's scrubbing use
it) is asked for a moment 80 s back:
- first: nothing fetched yet (the window's frames, the hardware ledger's ten frames of the
  minutes before, the lookback);
- again: the same moment, kept;
- one step back `,`: the moment one refresh earlier (kept frames reused);
- one step on `.`: the moment one refresh after the first (the newest replay goes on);
- a minute on `>`: the moment a minute after that.
The same steps again through a fresh source and replay, each asked once the engine's
prefetch of the moments around the one before had run (``Prefetch``): what a user who
reads a moment for a few seconds before stepping meets; beside it, how long that prefetch
still ran after the step before was shown, and what it read.
For each: wall time, HTTP requests, and the bytes of the answers (inflated JSON), also per
frame read; beside them, one live poll's requests and bytes, and the 1-minute load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ranktop.tui.core.moment import aligned  # noqa: E402
from ranktop.tui.engine.prefetch import Prefetch  # noqa: E402
from ranktop.tui.engine.replay import Replay  # noqa: E402
from ranktop.tui.settings.config import load_settings  # noqa: E402
from ranktop.tui.sources.prometheus.client import PromClient  # noqa: E402
from ranktop.tui.sources.prometheus.source import PrometheusSource  # noqa: E402
from scale_prometheus import serving  # noqa: E402

BACK_SECONDS = 80.0  # the moment replayed: this far before now (a minute on stays past)


class CountingClient(PromClient):
    """A client that counts its requests and the bytes of their answers."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.requests = 0
        self.bytes = 0

    def _send(self, *args, **kwargs):
        answer = super()._send(*args, **kwargs)
        self.requests += 1
        self.bytes += len(answer.content)
        return answer

    def take(self) -> tuple[int, int]:
        counted = (self.requests, self.bytes)
        self.requests = self.bytes = 0
        return counted


class FrameCounter:
    """Counts the frames the source gives a replay."""

    def __init__(self, source: PrometheusSource) -> None:
        self.frames = 0
        self._frames_at = source.frames_at
        source.frames_at = self.frames_at

    def frames_at(self, times):
        for found in self._frames_at(times):
            self.frames += 1
            yield found

    def take(self) -> int:
        counted, self.frames = self.frames, 0
        return counted


def prefetched_row(prefetch: Prefetch, client: CountingClient, counter: FrameCounter) -> str:
    """How long the prefetch of the moments around the one shown took, and what it read."""
    began = time.perf_counter()
    prefetch.settled()
    took = time.perf_counter() - began
    requests, size = client.take()
    return (f"    (its prefetch: {took * 1000:6.0f} ms more, {counter.take():3d} frames read, "
            f"{requests:4d} requests, {size / 1e6:7.2f} MB)")


def measure(url: str, ranks: int, prefetched: bool) -> list[str]:
    settings = load_settings(overrides={"prometheus": {"url": url, "timeout_seconds": 120}},
                             environ={})
    client = CountingClient(settings.prometheus)
    source = PrometheusSource(settings, client=client)
    source.poll_now()  # learn the ranks: the queries may change with them
    client.take()
    source.poll_now()
    requests, size = client.take()
    rows = [f"ranks {ranks}: a live poll asks {requests} requests, {size / 1e6:.2f} MB"
            f"{'; each step after the prefetch of the one before' if prefetched else ''}"]
    counter = FrameCounter(source)
    replay = Replay(settings, source)
    prefetch = Prefetch(replay) if prefetched else None
    moment = aligned(time.time() - BACK_SECONDS, settings.refresh_seconds)
    step = settings.refresh_seconds
    for what, at in (("first", moment), ("again", moment), ("one step back ,", moment - step),
                     ("one step on .", moment + step),
                     ("a minute on >", moment + step + 60.0)):
        if prefetch is not None:
            rows.append(prefetched_row(prefetch, client, counter))
        began = time.perf_counter()
        analysis = replay.at(at)
        took = time.perf_counter() - began
        requests, size = client.take()
        frames = counter.take()
        if prefetch is not None:
            prefetch.around(at)
        per_frame = f", {size / frames / 1e6:.2f} MB a frame" if frames else ""
        rows.append(f"  {what:<16} {took * 1000:8.0f} ms  {frames:3d} frames read  "
                    f"{requests:4d} requests  {size / 1e6:7.2f} MB{per_frame}  "
                    f"({len(analysis.anomalies)} anomalies, load {os.getloadavg()[0]:.1f})")
    if prefetch is not None:
        prefetch.close()
    replay.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=512)
    parser.add_argument("--history", type=float, default=200.0,
                        help="seconds of the job Prometheus holds before the replay")
    args = parser.parse_args()
    with serving(args.ranks) as (url, ranks):
        began = time.time()
        print(f"waiting {args.history:.0f} s for Prometheus to hold the job's history",
              file=sys.stderr)
        time.sleep(max(0.0, args.history - (time.time() - began)))
        print("\n".join(measure(url, ranks, prefetched=False)))
        print("\n".join(measure(url, ranks, prefetched=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
