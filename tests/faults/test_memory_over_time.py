"""Ten minutes of faults, fast-forwarded: the console's pipeline (source, analysis, event
log) polls through the fault proxy every 4 simulated seconds while the proxy cycles through
its faults (each held 3 polls, the cycle 3.4 minutes long), 150 polls in all, and the
process's memory is sampled after every poll. What was allocated by minute 2 must be nearly
all it ever needs: RSS growth from minute 2 to minute 10, in which every fault comes twice
or more, is the leak bound (measured 6.9 MB; a client keeping its answers grew 41 MB).
The megabyte label is left to its own test: its transient 32 MB answers make RSS swing by
whatever the allocator keeps."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.faults.conftest import JOB

LEAK_BOUND_MB = 15  # RSS growth, minute 2 to minute 10
PEAK_BOUND_MB = 250
SCRIPT = """
import asyncio, json, os, sys, urllib.request
from ranktop.tui.core.events import EventLog
from ranktop.tui.engine.pipeline import Pipeline
from ranktop.tui.settings.config import load_settings
from ranktop.tui.sources.prometheus.source import PrometheusSource

CYCLE = ["pass", "http-503", "status-error", "truncated", "nan", "escapes", "flap", "html",
         "reset", "garbage", "hw-thermal", "hang", "header-trickle", "empty", "http-401",
         "inf", "pass"]
REFRESH, POLLS, HOLD = 4.0, 150, 3  # 10 minutes; each fault held for 3 polls

def rss_mb():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

class Clock:
    now = 1_800_000_000.0
    def __call__(self):
        return self.now

proxy_url, job, state = sys.argv[1:4]

def set_fault(name):
    urllib.request.urlopen(proxy_url + "/__fault/" + name, timeout=10).read()

clock = Clock()
settings = load_settings(overrides={
    "prometheus": {"url": proxy_url, "job": job, "timeout_seconds": 0.5},
    "display": {"refresh_seconds": REFRESH},
    # samples carry real timestamps while the clock runs ahead: never call them stale
    "ranks": {"stale_after_seconds": 86400}}, environ={})
source = PrometheusSource(settings, clock=clock)
pipeline = Pipeline(settings, source, EventLog(os.path.join(state, "events.jsonl")), clock)
samples = []
for poll in range(POLLS):
    set_fault(CYCLE[poll // HOLD % len(CYCLE)])
    analysis = asyncio.run(pipeline.poll())
    clock.now += REFRESH
    samples.append(rss_mb())
set_fault("pass")
minute = int(60 / REFRESH)
print(json.dumps({"at_2": samples[2 * minute - 1], "at_10": samples[-1], "peak": max(samples),
                  "faults": len(set(CYCLE)), "health": analysis.status.health.value,
                  "events": os.path.getsize(os.path.join(state, "events.jsonl"))}))
"""


def test_ten_minutes_of_faults_leave_memory_flat(proxy, tmp_path):
    # The proxy stays in this process: the memory measured is ranktop's alone.
    done = subprocess.run([sys.executable, "-c", SCRIPT, proxy.url, JOB, str(tmp_path)],
                          capture_output=True, text=True, timeout=590)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    growth = found["at_10"] - found["at_2"]
    print(f"\n10 min of {found['faults']} faults: RSS {found['at_2']:.0f} MB at minute 2, "
          f"{found['at_10']:.0f} MB at minute 10 (growth {growth:.1f} MB), "
          f"peak {found['peak']:.0f} MB")
    assert growth < LEAK_BOUND_MB
    assert found["peak"] < PEAK_BOUND_MB
    assert found["health"] == "ok"  # it recovered from the last fault
    assert found["events"] > 0  # the thermal fault was journalled
