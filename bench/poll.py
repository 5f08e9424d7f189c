"""Poll time against a local Prometheus, next to the raw HTTP time of the same queries.

    .venv/bin/python bench/poll.py            # 512 and 4,096 ranks, ~1 minute
    .venv/bin/python bench/poll.py --nodes 64

The quick form of bench/scale_prometheus.py (which measures it, and says how): `ranktop
simulate` and a Prometheus scraping it; ranktop's poll (PrometheusSource.poll_now: every
query, the rank join, the frame) and the same queries sent with httpx and decoded with json,
alternately in one run. The ratio of the medians is the figure (goal: at most 1.3x, in wall
time and in CPU). Needs Debian's prometheus.
"""

from __future__ import annotations

import argparse

from scale_prometheus import GPUS, measure, table  # this script's folder is on the path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, action="append",
                        help="nodes of 8 GPUs (repeatable; default 64 and 512)")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    rows = [measure(nodes * GPUS, args.rounds) for nodes in args.nodes or [64, 512]]
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
