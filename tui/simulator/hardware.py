"""The simulated GPUs' hardware error counters, and the faults that make them rise.

DCGM's error counters only go up, so these do too: every lap of the scenario adds its
faults' errors on top of the laps before, and a counter read at any t is still a pure
function of t. A fleet has a background as well: a few GPUs carry correctable row remaps
and PCIe replays from before the job, which never move.

What rises, and why:
  ecc_dbe     one uncorrectable remapped row on that GPU; with remap_failure = true the
              remap fails instead, and the failure flag stays set for good
  xid 79      a burst of PCIe replays on that GPU as its link gives way
  nvlink_drop NVLink CRC (flow-control) errors and replays for as long as the drop lasts:
              fast on the GPU with the bad link, slowly on the rest of its node
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ..core.model import RankMap
from .scenario import Fault

COUNTERS = (
    "remapped_rows",  # rows remapped for uncorrectable errors
    "remapped_rows_correctable",
    "row_remap_failure",  # 0/1: a gauge, not a counter, latched once set
    "pcie_replay",
    "nvlink_errors",  # NVLink CRC flit errors
    "nvlink_replay",
)
OLD_REMAPS_SHARE = 0.03  # GPUs carrying correctable remaps from before the job
OLD_REPLAYS_SHARE = 0.08  # GPUs carrying a few PCIe replays from before the job
XID_FALLEN_OFF_BUS = 79
REPLAY_BURST = (150, 400)  # PCIe replays as the link fails
CRC_PER_SECOND = (30.0, 50.0)  # on the GPU with the bad link
PEER_CRC_PER_SECOND = (0.5, 3.0)  # on the other GPUs of its node
REPLAYS_PER_CRC = 0.08


@dataclass(frozen=True)
class _Rise:
    """``amount`` more of ``counter`` on ``rank`` every lap, spread over [start, end)."""

    counter: str
    rank: int
    start: float
    end: float  # equal to start: one jump
    amount: float

    def by(self, loop_time: float) -> float:
        """How much of this lap's amount has come by ``loop_time``."""
        if loop_time < self.start:
            return 0.0
        if loop_time >= self.end:
            return self.amount
        return float(math.floor(self.amount * (loop_time - self.start) / (self.end - self.start)))


class ErrorCounters:
    """Every GPU's error counters at any time t, from a scenario's faults."""

    def __init__(self, rank_map: RankMap, faults: tuple[Fault, ...], loop: float,
                 seed: int) -> None:
        self._n = len(rank_map)
        self._loop = loop
        self._base = self._background(random.Random(f"{seed}:counters"))
        self._rises: list[_Rise] = []
        self._failed: dict[int, float] = {}  # rank -> the first time its remapping failed
        for fault in faults:
            rng = random.Random(f"{seed}:counters:{fault.effect}:{fault.start:g}:{fault.rank}")
            self._rise(fault, rank_map, rng)

    def _background(self, rng: random.Random) -> dict[str, list[float]]:
        base = {name: [0.0] * self._n for name in COUNTERS}
        for rank in range(self._n):
            if rng.random() < OLD_REMAPS_SHARE:
                base["remapped_rows_correctable"][rank] = float(rng.randint(1, 3))
            if rng.random() < OLD_REPLAYS_SHARE:
                base["pcie_replay"][rank] = float(rng.randint(1, 40))
        return base

    def _rise(self, fault: Fault, rank_map: RankMap, rng: random.Random) -> None:
        rank, start, end = fault.rank, fault.start, fault.end
        if fault.effect == "ecc_dbe":
            if fault.params.get("remap_failure"):
                self._failed[rank] = min(self._failed.get(rank, math.inf), start)
            else:
                self._rises.append(_Rise("remapped_rows", rank, start, start, 1.0))
        elif fault.effect == "xid" and fault.params["code"] == XID_FALLEN_OFF_BUS:
            burst = float(rng.randint(*REPLAY_BURST))
            self._rises.append(_Rise("pcie_replay", rank, start, start, burst))
        elif fault.effect == "nvlink_drop":
            node = rank_map.ranks[rank].node
            for peer in (r.rank for r in rank_map.ranks if r.node == node):
                rate = rng.uniform(*(CRC_PER_SECOND if peer == rank else PEER_CRC_PER_SECOND))
                crc = math.floor(rate * fault.duration)
                self._rises.append(_Rise("nvlink_errors", peer, start, end, crc))
                replays = math.floor(crc * REPLAYS_PER_CRC)
                self._rises.append(_Rise("nvlink_replay", peer, start, end, replays))

    def values(self, t: float) -> dict[str, list[float]]:
        """Each counter of every GPU at t seconds since the scenario began."""
        laps = math.floor(t / self._loop)
        loop_time = t - laps * self._loop
        found = {name: list(series) for name, series in self._base.items()}
        for rise in self._rises:
            found[rise.counter][rise.rank] += laps * rise.amount + rise.by(loop_time)
        for rank, since in self._failed.items():
            if t >= since:
                found["row_remap_failure"][rank] = 1.0
        return found
