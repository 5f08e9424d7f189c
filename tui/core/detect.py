"""Built-in anomaly detection over the stream of frames: what is wrong, where, and why.

Each detector reads one frame at a time and keeps only what it needs (when a condition
began, a short window of job-level values), so memory stays flat whatever the number of
ranks. A condition must hold for its configured time before it is reported, and stops
being reported as soon as it no longer holds.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from ranktop.tui.core.domain import (
    CRITICAL_XIDS,
    SEVERITIES,
    THERMAL_BITS,
    throttle_names,
    xid_meaning,
)
from ranktop.tui.core.metrics import present_median
from ranktop.tui.core.model import Frame, RankMap, is_missing
from ranktop.tui.settings.config import DetectSettings

MAD_TO_SIGMA = 1.4826  # a median absolute deviation, scaled to a normal's standard deviation


@dataclass(frozen=True)
class Anomaly:
    """One thing wrong: on a rank (or a node, from its first rank), or on the whole job."""

    kind: str
    severity: str
    rank: int | None
    summary: str
    since: float

    @property
    def key(self) -> tuple[str, int | None]:
        return self.kind, self.rank

    @property
    def order(self) -> tuple[int, float, int]:
        """Most severe first, then the oldest, then by rank."""
        return SEVERITIES.index(self.severity), self.since, -1 if self.rank is None else self.rank


class _Held:
    """When each condition began; a condition that lapses starts over."""

    def __init__(self) -> None:
        self.began: dict[object, float] = {}

    def update(self, now: float, holding: dict[object, str], seconds: float
               ) -> list[tuple[object, str, float]]:
        """(key, evidence, since) of the conditions held for at least ``seconds``."""
        self.began = {key: self.began.get(key, now) for key in holding}
        return [(key, text, self.began[key]) for key, text in holding.items()
                if now - self.began[key] >= seconds]


class Detectors:
    """Every built-in detector; ``update`` returns the anomalies active in a frame."""

    def __init__(self, settings: DetectSettings, rank_map: RankMap | None = None) -> None:
        self.s = settings
        self.rank_map = rank_map or RankMap((), (), 1, "not known yet")
        self._held = {name: _Held() for name in ("thermal", "sm", "job_stall", "straggler",
                                                 "nvlink", "throughput")}
        self._seen: set[int] = set()
        self._gone_since: dict[int, float] = {}
        self._loss: deque[tuple[float, float]] = deque()
        self._tokens: deque[tuple[float, float]] = deque()

    def update(self, frame: Frame, rank_map: RankMap | None = None) -> list[Anomaly]:
        """The anomalies active in ``frame``. A new ``rank_map`` (the job's ranks learned
        anew) keeps every timer: state is kept by rank number, which never changes."""
        if rank_map is not None:
            self.rank_map = rank_map
        n = len(self.rank_map)
        up = frame.ranks_up(n)
        found = [
            *self._missing(frame, up), *self._thermal(frame), *self._sm_stall(frame, up),
            *self._straggler(frame, up), *self._nvlink(frame), *self._hardware(frame),
            *self._loss_divergence(frame), *self._throughput(frame),
        ]
        return sorted(found, key=lambda a: a.order)

    # -- per rank ----------------------------------------------------------------------

    def _missing(self, frame: Frame, up: list[bool]) -> list[Anomaly]:
        now = frame.time
        self._seen.update(r for r, is_up in enumerate(up) if is_up)
        self._gone_since = {r: self._gone_since.get(r, now) for r in self._seen if not up[r]}
        found = [Anomaly("missing", "critical", r, "no data: its series are gone", since)
                 for r, since in self._gone_since.items()]
        never = [r for r, is_up in enumerate(up) if not is_up and r not in self._seen]
        if never and self._seen:
            found.append(Anomaly("never_seen", "warning", never[0],
                                 f"{len(never)} rank(s) never reported, e.g. rank {never[0]}",
                                 now))
        return found

    def _thermal(self, frame: Frame) -> list[Anomaly]:
        temps, bits = frame.values.get("temperature"), frame.values.get("throttle_reasons")
        clocks = frame.values.get("sm_clock")
        holding: dict[object, str] = {}
        typical_clock = present_median(clocks)
        for rank in range(len(self.rank_map)):
            temp = _at(temps, rank)
            flags = _at(bits, rank)
            throttled = not is_missing(flags) and int(flags) & THERMAL_BITS
            if (not is_missing(temp) and temp > self.s.temperature_c) or throttled:
                parts = [] if is_missing(temp) else [f"GPU {temp:.0f} °C"]
                if throttled:
                    parts.append(f"throttling ({throttle_names(flags)})")
                clock = _at(clocks, rank)
                if not is_missing(clock) and not is_missing(typical_clock):
                    parts.append(f"SM clock {clock:.0f} MHz (median {typical_clock:.0f})")
                holding[rank] = ", ".join(parts)
        held = self._held["thermal"].update(frame.time, holding, self.s.thermal_seconds)
        return [Anomaly("thermal", "major", r, text, since) for r, text, since in held]

    def _sm_stall(self, frame: Frame, up: list[bool]) -> list[Anomaly]:
        sm = frame.values.get("sm_active")
        if sm is None:
            return []
        low = {r: f"SM activity {sm[r]:.0f} %" for r in range(len(self.rank_map))
               if not is_missing(_at(sm, r)) and sm[r] < self.s.sm_active_pct}
        live = sum(up) or 1
        if len(low) > self.s.job_stall_share * live:
            text = (f"SM activity below {self.s.sm_active_pct:.0f} % on "
                    f"{len(low)}/{live} ranks (median {present_median(sm):.0f} %)")
            held = self._held["job_stall"].update(frame.time, {None: text},
                                                  self.s.job_stall_seconds)
            self._held["sm"].update(frame.time, {}, self.s.sm_stall_seconds)
            return [Anomaly("job_stall", "critical", None, t, since) for _, t, since in held]
        self._held["job_stall"].update(frame.time, {}, self.s.sm_stall_seconds)
        held = self._held["sm"].update(frame.time, low, self.s.sm_stall_seconds)
        return [Anomaly("sm_stall", "major", r, t, since) for r, t, since in held]

    def _straggler(self, frame: Frame, up: list[bool]) -> list[Anomaly]:
        compute = frame.values.get("compute_time")
        name, values = ("compute", compute) if compute is not None else (
            "SM activity", frame.values.get("sm_active"))
        idle = name == "SM activity" and present_median(values) < self.s.sm_active_pct
        if values is None or idle:
            return []  # a job that is not computing has no straggler
        present = [v for v in values if not is_missing(v)]
        if len(present) < 3:
            return []
        middle = median(present)
        spread = MAD_TO_SIGMA * median(abs(v - middle) for v in present)
        floor = max(self.s.straggler_mads * spread, 1e-9)
        holding: dict[object, str] = {}
        for rank, value in enumerate(values):
            if is_missing(value) or middle <= 0:
                continue
            if value > self.s.straggler_factor * middle and value - middle > floor:
                holding[rank] = (f"{name} {value / middle:.2f}x median "
                                 f"({_short(value)} vs {_short(middle)})")
        held = self._held["straggler"].update(frame.time, holding, self.s.straggler_seconds)
        return [Anomaly("straggler", "major", r, t, since) for r, t, since in held]

    def _nvlink(self, frame: Frame) -> list[Anomaly]:
        links = frame.values.get("nvlink")
        g = self.rank_map.gpus_per_node
        if links is None or not len(self.rank_map):
            return []
        nodes = [present_median(links[i:i + g]) for i in range(0, len(self.rank_map), g)]
        typical = present_median(nodes)
        holding: dict[object, str] = {}
        if not is_missing(typical) and typical > 1e9:  # an idle or hung job has no NVLink norm
            for node, value in enumerate(nodes):
                if not is_missing(value) and value < self.s.nvlink_fraction * typical:
                    holding[node * g] = (f"NVLink of node {self.rank_map.ranks[node * g].host} "
                                         f"{value / 1e9:.0f} GB/s per GPU, {value / typical:.2f}x "
                                         f"the median node ({typical / 1e9:.0f} GB/s)")
        held = self._held["nvlink"].update(frame.time, holding, self.s.nvlink_seconds)
        return [Anomaly("nvlink", "major", r, t, since) for r, t, since in held]

    def _hardware(self, frame: Frame) -> list[Anomaly]:
        found = []
        for rank, count in enumerate(frame.values.get("ecc_dbe", ())):
            if not is_missing(count) and count > 0:
                found.append(Anomaly("ecc", "critical", rank,
                                     f"{count:.0f} uncorrectable (double-bit) ECC error(s)",
                                     frame.time))
        for rank, code in enumerate(frame.values.get("xid", ())):
            if not is_missing(code) and code > 0:
                meaning = xid_meaning(int(code))
                severity = "critical" if int(code) in CRITICAL_XIDS else "major"
                found.append(Anomaly("xid", severity, rank, f"XID {code:.0f}: {meaning}",
                                     frame.time))
        return found

    # -- the whole job -----------------------------------------------------------------

    def _loss_divergence(self, frame: Frame) -> list[Anomaly]:
        loss = frame.job.get("loss", float("nan"))
        if is_missing(loss):
            return []
        _push(self._loss, frame.time, loss, self.s.loss_window_seconds)
        lowest = min(v for _, v in self._loss)
        rising = len(self._loss) >= 3 and loss >= self._loss[-3][1]
        if lowest > 0 and loss > lowest * (1 + self.s.loss_rise) and rising:
            return [Anomaly("loss", "critical", None,
                            f"loss {loss:.3f}, {loss / lowest:.2f}x its lowest "
                            f"({lowest:.3f}) in the last {self.s.loss_window_seconds:.0f} s",
                            frame.time)]
        return []

    def _throughput(self, frame: Frame) -> list[Anomaly]:
        tokens = frame.job.get("tokens_per_s", float("nan"))
        if is_missing(tokens):
            return []
        _push(self._tokens, frame.time, tokens, self.s.throughput_window_seconds)
        typical = median(v for _, v in self._tokens)
        holding: dict[object, str] = {}
        if typical > 0 and tokens < self.s.throughput_fraction * typical:
            holding[None] = (f"{tokens / 1e6:.2f} M tokens/s, {tokens / typical:.2f}x the "
                             f"recent median ({typical / 1e6:.2f} M)")
        held = self._held["throughput"].update(frame.time, holding, self.s.throughput_seconds)
        return [Anomaly("throughput", "major", None, t, since) for _, t, since in held]


def _at(values: Sequence[float] | None, rank: int) -> float:
    return values[rank] if values is not None and rank < len(values) else float("nan")


def _push(window: deque[tuple[float, float]], now: float, value: float, seconds: float) -> None:
    window.append((now, value))
    while window and window[0][0] < now - seconds:
        window.popleft()


def _short(value: float) -> str:
    return f"{value:.2f} s" if value < 20 else f"{value:.0f}"
