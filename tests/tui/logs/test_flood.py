"""A log growing at 50 MB/s (the issue's 60 s, shortened to 5 s here) followed the way the
rank screen follows it (every second, the pane keeping its last 5,000 lines): the reader's
memory stays bounded, and it reads a bounded share of the flood, skipping the rest with a
note, instead of all of it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ranktop.tui.logs.tail import FileLog

MB_PER_S = 50
SECONDS = 5
RSS_GROWTH_BOUND_MB = 100  # measured ~20-30 MB; reading the whole flood is ~4x the bound
FLOOD = Path(__file__).with_name("flood.py")
READER = """
import collections, json, os, sys, time
from pathlib import Path
from ranktop.tui.logs.tail import FileLog

def rss_mb():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

log = FileLog(Path(sys.argv[1]))
pane = collections.deque(log.tail(300), maxlen=5000)  # LogView keeps as many
before = peak = rss_mb()
most = skipped = 0
print("ready", flush=True)
for _ in range(int(sys.argv[2])):
    time.sleep(1.0)  # the rank screen's FOLLOW_SECONDS
    new = log.follow()
    pane.extend(new)
    peak = max(peak, rss_mb())  # while the new lines are held
    most = max(most, len(new))
    skipped += sum(line.text.startswith("[ranktop: skipped") for line in new)
print(json.dumps({"growth_mb": peak - before, "bytes_read": log.bytes_read,
                  "most_lines": most, "skip_notes": skipped, "status": log.status()}))
"""


def test_a_log_growing_50_mb_a_second_is_followed_in_bounded_memory(tmp_path):
    path = tmp_path / "rank0.log"
    path.write_bytes(b"[rank 0] starting\n")
    reader = subprocess.Popen([sys.executable, "-c", READER, str(path), str(SECONDS + 1)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline() == "ready\n"
        written = int(subprocess.run([sys.executable, str(FLOOD), str(path), str(MB_PER_S),
                                      str(SECONDS)], capture_output=True, text=True,
                                     check=True, timeout=120).stdout)
        out, err = reader.communicate(timeout=120)
        out = out.strip()
    finally:
        reader.kill()
        path.unlink(missing_ok=True)
    assert reader.returncode == 0, err
    found = json.loads(out)
    print(f"\nflood: {written / 1e6:.0f} MB in {SECONDS} s; reader: {found}")
    assert written >= MB_PER_S * SECONDS * 1_000_000 / 2  # the flood happened
    assert found["growth_mb"] < RSS_GROWTH_BOUND_MB
    assert found["most_lines"] <= FileLog(path).max_follow_lines + 2  # + the skip notes
    assert found["bytes_read"] < written / 2  # it skipped, rather than read it all
    assert found["skip_notes"] >= 1 and found["status"] == ""
