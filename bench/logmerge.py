"""A rank's log files merged in time order: what the rank screen pays when it opens a rank,
and per line followed.

    .venv/bin/python bench/logmerge.py [--lines 300] [--files 2]

``--files`` files of ``--lines`` lines each (stderr-like glog and NCCL lines, stdout-like
Python logging lines, a third of them without a stamp) are written to a temporary folder;
then ``MergedLog.tail(lines)`` (read, stamp parsing, merge) and ``FileLog.tail(lines)`` of
each file without merging are timed, 20 times each, and the medians printed with the cost
of the merge per line.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ranktop.tui.logs.merged import MergedLog
from ranktop.tui.logs.tail import FileLog

RUNS = 20


def lines_of(kind: int, count: int) -> list[str]:
    """A file's lines: glog-stamped (stderr) or logging-stamped (stdout), every third bare."""
    found = []
    for i in range(count):
        minute, second = divmod(i % 3600, 60)
        if i % 3 == 2:
            found.append(f"host:1:1 [3] NCCL INFO an unstamped line {i}")
        elif kind % 2:
            found.append(f"2026-03-14 02:{minute:02d}:{second:02d},500 [rank 3] step {i} loss 2.1")
        else:
            found.append(f"[rank3]:[E0314 02:{minute:02d}:{second:02d}.000000 x.cpp:1] line {i}")
    return found


def median_ms(run) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--files", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for kind in range(args.files):
            path = Path(folder) / f"file{kind}.log"
            path.write_text("".join(line + "\n" for line in lines_of(kind, args.lines)))
            paths.append(path)
        logs = [FileLog(path) for path in paths]
        merged = MergedLog([FileLog(path) for path in paths])
        apart = median_ms(lambda: [log.tail(args.lines) for log in logs])
        together = median_ms(lambda: merged.tail(args.lines))
    total = args.files * args.lines
    print(f"{args.files} files x {args.lines} lines, median of {RUNS}:")
    print(f"  each file's tail, not merged: {apart:.2f} ms")
    print(f"  merged in time order:         {together:.2f} ms"
          f" ({(together - apart) * 1000 / total:.1f} us a line for the merge)")


if __name__ == "__main__":
    main()
