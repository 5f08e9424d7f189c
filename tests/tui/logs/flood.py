"""A log writer that floods: ``python flood.py PATH MB_PER_S SECONDS`` appends realistic
lines at that rate for that long, then prints how many bytes it wrote."""

from __future__ import annotations

import sys
import time

LINE = (b"[rank 0] step 123456 loss 2.137 step_time 1.12s tokens/s 3.74e6 "
        b"NCCL INFO Channel 00/24 : 0[0] -> 1[1] via P2P/IPC\n")
BLOCK = LINE * (1_000_000 // len(LINE))


def flood(path: str, rate: float, seconds: float) -> int:
    written = 0
    started = time.monotonic()
    with open(path, "ab", buffering=0) as file:
        while (elapsed := time.monotonic() - started) < seconds:
            while written < rate * elapsed:
                written += file.write(BLOCK)
            time.sleep(0.01)
    return written


if __name__ == "__main__":
    print(flood(sys.argv[1], float(sys.argv[2]) * 1_000_000, float(sys.argv[3])))
