"""What goes with a slow rank: the signs on its GPU, its links and its error counters that
explain why it is slow, each compared with the job's median.

Short words, most telling first, for the one line an anomaly gets: "clock 1400/1980 MHz,
throttle: SW thermal, 88 °C (med 62), power 520/640 W". Only what stands out is said.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from ..domain import throttle_names
from ..model import Frame, is_missing
from .hardware import LedgerEntry

CLOCK_LOW = 0.93  # an SM clock under this share of the median is held back
HOTTER_BY = 8.0  # °C above the median that count as running hot
POWER_OFF = 0.10  # power this far from the median, either way
NVLINK_LOW = 0.5  # NVLink under this share of the median
WAITS_LESS = 0.75  # collective time under this share of the median: its peers wait for it
# Throttle reasons that say nothing about a slow GPU: idle, sync boost, display clocks.
BENIGN_BITS = 0x001 | 0x010 | 0x100
SAMPLE = 1024  # ranks a median is taken over


class Medians:
    """The job's median of each metric of one frame, each worked out once, when first asked."""

    def __init__(self, frame: Frame) -> None:
        self.frame = frame
        self._known: dict[str, float] = {}

    def of(self, metric: str) -> float:
        if metric not in self._known:
            values = self.frame.values.get(metric, ())
            # A typical value to compare with: the median of a thousand ranks spread over
            # the job is as good as all of them.
            stride = max(1, len(values) // SAMPLE)
            present = [v for v in values[::stride] if v == v]  # not NaN
            self._known[metric] = median(present) if present else float("nan")
        return self._known[metric]

    def least(self, metric: str) -> float:
        key = f"least:{metric}"
        if key not in self._known:
            present = [v for v in self.frame.values.get(metric, ()) if v == v]  # not NaN
            self._known[key] = min(present, default=float("nan"))
        return self._known[key]


def causes(frame: Frame, rank: int, ledger: Sequence[LedgerEntry] = (),
           medians: Medians | None = None) -> list[str]:
    """The signs that stand out on ``rank`` in ``frame``, most telling first (``medians``:
    the frame's, shared by the ranks asked about)."""
    m = medians if medians is not None and medians.frame is frame else Medians(frame)
    found = [*_clock(frame, rank, m), *_temperature(frame, rank, m), *_power(frame, rank, m),
             *_nvlink(frame, rank, m)]
    for entry in ledger:
        if entry.counter.flag:
            found.append(entry.counter.noun)
        elif entry.rise > 0:
            found.append(f"+{entry.rise:.0f} {entry.counter.noun}")
    ib = _value(frame, "ib_errors", rank)
    if not is_missing(ib) and ib > 0:
        found.append(f"+{ib:.0f} InfiniBand errors")
    found += _collectives(frame, rank, m)
    return found


def said(found: Sequence[str], gpu: bool = True) -> str:
    """The signs found, or that there were none where they were looked for (``gpu``:
    whether the rank has GPU data to look at)."""
    return ", ".join(found) if found else f"nothing on its {'GPU or ' if gpu else ''}links"


def _value(frame: Frame, metric: str, rank: int) -> float:
    values = frame.values.get(metric)
    return values[rank] if values is not None and rank < len(values) else float("nan")


def _against(frame: Frame, metric: str, rank: int, m: Medians) -> tuple[float, float]:
    """The rank's value and the job's median; NaN where either is missing."""
    return _value(frame, metric, rank), m.of(metric)


def _clock(frame: Frame, rank: int, m: Medians) -> list[str]:
    clock, typical = _against(frame, "sm_clock", rank, m)
    found = []
    if not (is_missing(clock) or is_missing(typical)) and clock < CLOCK_LOW * typical:
        found.append(f"clock {clock:.0f}/{typical:.0f} MHz")
    bits = _value(frame, "throttle_reasons", rank)
    if not is_missing(bits) and int(bits) & ~BENIGN_BITS:
        found.append(f"throttle: {throttle_names(int(bits) & ~BENIGN_BITS)}")
    return found


def _temperature(frame: Frame, rank: int, m: Medians) -> list[str]:
    temp, typical = _against(frame, "temperature", rank, m)
    if is_missing(temp) or is_missing(typical) or temp < typical + HOTTER_BY:
        return []
    return [f"{temp:.0f} °C (med {typical:.0f})"]


def _power(frame: Frame, rank: int, m: Medians) -> list[str]:
    power, typical = _against(frame, "power", rank, m)
    if is_missing(power) or is_missing(typical) or abs(power - typical) < POWER_OFF * typical:
        return []
    return [f"power {power:.0f}/{typical:.0f} W"]


def _nvlink(frame: Frame, rank: int, m: Medians) -> list[str]:
    link, typical = _against(frame, "nvlink", rank, m)
    if is_missing(link) or is_missing(typical) or link >= NVLINK_LOW * typical:
        return []
    return [f"NVLink {link / 1e9:.0f}/{typical / 1e9:.0f} GB/s"]


def _collectives(frame: Frame, rank: int, m: Medians) -> list[str]:
    """NCCL Inspector's collective times, where exported: a straggler's peers wait for it
    inside collectives, so its own are the shortest."""
    mine, typical = _against(frame, "collective_time", rank, m)
    if is_missing(mine) or is_missing(typical) or not mine < WAITS_LESS * typical:
        return []
    least = mine <= m.least("collective_time")
    return [f"waits {'least' if least else 'less'} in collectives "
            f"({mine:.2f}/{typical:.2f} s)"]
