"""Built-in anomaly detection over the stream of frames: what is wrong, where, and why.

Each detector reads one frame at a time and keeps only what it needs (when a condition
began, a short window of job-level values), so memory stays flat whatever the number of
ranks. A condition shows as pending the moment it holds, is confirmed once it has held for
its configured time (or at once on severe evidence), and ends as soon as it no longer holds.
State is kept by rank number, which never changes, so a rank map that grows keeps every
timer running.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from statistics import median

from .. import ranks
from ..anomaly import EVERY_KEY, Anomaly, Hold
from ..config_values import DetectSettings
from ..domain import (
    CRITICAL_XIDS,
    THERMAL_BITS,
    throttle_names,
    xid_meaning,
)
from ..metrics import FrameSummaries, present_median
from ..model import Frame, RankMap, is_missing
from ..parallelism import Parallelism
from .down import Liveness
from .failslow import FailSlow
from .hardware import Ledger, gpu_unknown, silent_gpus
from .hotspots import MOVING_SECONDS
from .lasting import FIGURES, LastingFaults
from .lateness import NO_PROGRESS_SECONDS
from .lookback import Lookback
from .loss_rule import LossRule
from .straggler import Stragglers

HW_THERMAL_BIT = 0x040  # the GPU's own thermal protection: no doubt left
NVLINK_SEVERE_FRACTION = 0.1  # a node's NVLink below a tenth of the median's: a link is down
SM_STALL_OUTLIER = 0.75  # a stalled rank's SM activity is under this share of the median
WARMUP_POLLS = 3  # before this many polls, "no anomalies" means "still checking"
# A replayed moment starts this long before its longest hold, so that a condition confirmed
# at the moment was also seen beginning, and fail-slow has its baseline.
REPLAY_MARGIN_SECONDS = 30.0
# A tokens/s reading is a rate over a window: a counter's rate over the last minute (as
# discovery reads one), a step's tokens over its time. For this long after a job stall (most
# GPUs idle) the rate still covers the stall: a low one is the stall's, not a new drop. A drop
# that outlasts it is raised then, and confirmed its hold later.
RATE_WINDOW_SECONDS = 60.0

__all__ = ["Anomaly", "Detectors"]


class Detectors:
    """Every built-in detector; ``update`` returns the anomalies active in a frame."""

    def __init__(self, settings: DetectSettings, rank_map: RankMap | None = None,
                 parallelism: Parallelism | None = None) -> None:
        self.s = settings
        self.rank_map = rank_map or RankMap((), (), 1, "not known yet")
        s = settings
        self.holds = {
            "thermal": Hold("thermal", "major", s.thermal_seconds),
            "sm_stall": Hold("sm_stall", "major", s.sm_stall_seconds),
            "job_stall": Hold("job_stall", "critical", s.job_stall_seconds),
            "nvlink": Hold("nvlink", "major", s.nvlink_seconds),
            "throughput": Hold("throughput", "major", s.throughput_seconds),
            "loss": Hold("loss", "critical", s.loss_seconds),
            "ecc": Hold("ecc", "critical", 0),
            "xid": Hold("xid", "major", 0),
            "xid_critical": Hold("xid", "critical", 0),
        }
        self.stragglers = Stragglers(s, parallelism)
        self.fail_slow = FailSlow(s.failslow_shift, s.failslow_seconds)
        self.liveness = Liveness()
        self.ledger = Ledger()
        self._nodes: tuple[RankMap | None, dict[int, list[int]]] = (None, {})
        self._faults: dict[str, dict[object, str]] = {}  # last poll's hardware faults
        self._was_up: tuple[bool, ...] = ()  # last poll's ranks up
        self.lasting = LastingFaults()
        self.polls = 0
        self.loss = LossRule(s.loss_window_seconds, s.loss_rise, s.loss_spreads)
        self._tokens: deque[tuple[float, float]] = deque()
        self._stalled_at: float | None = None  # the last poll with a job stall

    def update(self, frame: Frame, rank_map: RankMap | None = None,
               progressing: bool = True,
               summaries: FrameSummaries | None = None) -> list[Anomaly]:
        """The anomalies active in ``frame``. A new ``rank_map`` (the job's ranks learned
        anew) keeps every timer: state is kept by rank number, which never changes.
        ``summaries``: the frame's, when already worked out."""
        summaries = summaries if summaries is not None else FrameSummaries(frame)
        if rank_map is not None:
            if ranks.is_guessed(self.rank_map) and not ranks.is_guessed(rank_map):
                self.liveness.forget_guesses()
            self.rank_map = rank_map
        n = len(self.rank_map)
        up = frame.ranks_up(n)
        self.polls += 1
        silent = silent_gpus(frame)
        hardware = [*self._hardware(frame, up, silent),
                    *self.ledger.update(frame, self.nodes(), silent)]
        for fault in hardware:
            if fault.rank is not None:
                self.liveness.note_fault(fault.rank, fault.since, fault.summary,
                                         fault.severity)
        stragglers = self.stragglers.update(frame, self.rank_map, progressing, self.ledger,
                                            summaries)
        step = summaries.median("step_time")
        fail_slow = self.fail_slow.update(frame.time, step, bool(stragglers) or not progressing)
        sm_stall = self._sm_stall(frame, up, summaries)
        if any(a.kind == "job_stall" for a in sm_stall):
            self._stalled_at = frame.time
        found = [
            *self.liveness.update(frame, up), *self._thermal(frame, summaries), *sm_stall,
            *stragglers, *fail_slow, *self._nvlink(frame), *hardware,
            *self._loss_divergence(frame), *self._throughput(frame),
        ]
        return sorted(found, key=lambda a: a.order)

    @property
    def lookback_seconds(self) -> float:
        """How much of the job's past its windowed detectors judge by."""
        return max(self.s.loss_window_seconds, self.s.throughput_window_seconds)

    @property
    def replay_seconds(self) -> float:
        """How much of the past, at the refresh step, a replay feeds the detectors so that
        they judge a moment as a console watching since then did: the longest hold, a
        straggler's wander window, the no-progress wait, and a margin."""
        s = self.s
        holds = (s.thermal_seconds, s.sm_stall_seconds, s.job_stall_seconds,
                 s.straggler_seconds, s.nvlink_seconds, s.throughput_seconds,
                 s.failslow_seconds)
        return max(*holds, MOVING_SECONDS, NO_PROGRESS_SECONDS) + REPLAY_MARGIN_SECONDS

    def warm_ledger(self, frame: Frame, rank_map: RankMap) -> None:
        """Let the hardware ledger see an earlier frame (a replay's minutes before its
        window), so a counter that rose then is judged as a console watching then did."""
        self.rank_map = rank_map
        self.ledger.update(frame, self.nodes())

    def warm(self, lookback: Lookback) -> None:
        """Start from what the backend held before the first poll: the job's loss and
        throughput windows, the ranks seen (one gone since is missing, not never seen), and
        the error counters before it."""
        for when, loss in lookback.job.get("loss", ()):
            self.loss.learn(when, loss)
        for when, tokens in lookback.job.get("tokens_per_s", ()):
            _push(self._tokens, when, tokens, self.s.throughput_window_seconds)
        self.liveness.seen_before(lookback.last_seen, lookback.seen_step)
        self.ledger.seed(lookback.counters, lookback.counters_at)

    @property
    def warmed_up(self) -> bool:
        """Whether the detectors have seen enough polls for "no anomalies" to mean it."""
        return self.polls >= WARMUP_POLLS

    # -- per rank ----------------------------------------------------------------------

    def _thermal(self, frame: Frame, summaries: FrameSummaries) -> list[Anomaly]:
        temps, bits = frame.values.get("temperature"), frame.values.get("throttle_reasons")
        clocks = frame.values.get("sm_clock")
        holding: dict[object, str] = {}
        severe: dict[object, str] = {}
        figures: dict[object, str] = {}
        typical_clock = summaries.median("sm_clock")
        for rank in self._thermal_candidates(temps, bits):
            temp = _at(temps, rank)
            flags = _at(bits, rank)
            throttled = not is_missing(flags) and int(flags) & THERMAL_BITS
            if (not is_missing(temp) and temp > self.s.temperature_c) or throttled:
                figures[rank] = "" if is_missing(temp) else f"{temp:.0f} °C"
                parts = [f"GPU {figures[rank]}"] if figures[rank] else []
                if throttled:
                    parts.append(f"throttling ({throttle_names(flags)})")
                clock = _at(clocks, rank)
                if not is_missing(clock) and not is_missing(typical_clock):
                    parts.append(f"SM clock {clock:.0f} MHz (median {typical_clock:.0f})")
                holding[rank] = ", ".join(parts)
                if not is_missing(flags) and int(flags) & HW_THERMAL_BIT:
                    severe[rank] = "HW thermal slowdown is set"
        unseen = frame.without(("temperature", "throttle_reasons"), len(self.rank_map))
        return self.holds["thermal"].update(frame.time, holding, severe, figures,
                                            unseen=unseen)

    def _thermal_candidates(self, temps: Sequence[float] | None,
                            bits: Sequence[float] | None) -> list[int]:
        """The ranks over the temperature bar or with a thermal throttle bit set, by rank:
        picked in one pass per metric, the rest never looked at one by one."""
        n, limit = len(self.rank_map), self.s.temperature_c
        hot = {rank for rank, temp in enumerate((temps or ())[:n]) if temp > limit}  # NaN: no
        hot.update(rank for rank, flags in enumerate((bits or ())[:n])
                   if flags and flags == flags and int(flags) & THERMAL_BITS)
        return sorted(hot)

    def _sm_stall(self, frame: Frame, up: list[bool],
                  summaries: FrameSummaries) -> list[Anomaly]:
        sm = frame.values.get("sm_active")
        if sm is None:
            return [anomaly for name in ("sm_stall", "job_stall")
                    for anomaly in self.holds[name].update(frame.time, {}, unseen=EVERY_KEY)]
        low = {r: f"SM activity {value:.0f} %"  # NaN is below nothing
               for r, value in enumerate(sm[:len(self.rank_map)])
               if value < self.s.sm_active_pct}
        live = sum(up) or 1
        typical = summaries.median("sm_active")
        if len(low) > self.s.job_stall_share * live:
            text = (f"SM activity below {self.s.sm_active_pct:.0f} % on "
                    f"{len(low)}/{live} ranks (median {typical:.0f} %)")
            self.holds["sm_stall"].update(frame.time, {})
            return self.holds["job_stall"].update(frame.time, {None: text})
        self.holds["job_stall"].update(frame.time, {})
        # One rank stalls when it idles while the others work: a rank a hair under the
        # threshold beside a job that is itself slowed (waiting on a straggler) is not one.
        stalled = {r: f"{text} (median {typical:.0f} %)" for r, text in low.items()
                   if sm[r] < SM_STALL_OUTLIER * typical}
        return self.holds["sm_stall"].update(frame.time, stalled,
                                             unseen=frame.without(("sm_active",), len(sm)))

    def nodes(self) -> dict[int, list[int]]:
        """Each node's ranks, by the node's first rank (kept while the rank map is)."""
        if self._nodes[0] is not self.rank_map:
            self._nodes = (self.rank_map, _nodes(self.rank_map))
        return self._nodes[1]

    def _nvlink(self, frame: Frame) -> list[Anomaly]:
        links = frame.values.get("nvlink")
        if links is None or not len(self.rank_map):
            return self.holds["nvlink"].update(frame.time, {}, unseen=EVERY_KEY)
        nodes = self.nodes()
        per_node = {first: present_median([_at(links, r) for r in ranks])
                    for first, ranks in nodes.items()}
        typical = present_median(list(per_node.values()))
        holding: dict[object, str] = {}
        severe: dict[object, str] = {}
        if not is_missing(typical) and typical > 1e9:  # an idle or hung job has no NVLink norm
            for first, value in per_node.items():
                if not is_missing(value) and value < self.s.nvlink_fraction * typical:
                    holding[first] = (f"NVLink of node {self.rank_map.ranks[first].host} "
                                      f"{value / 1e9:.0f} GB/s per GPU, {value / typical:.2f}x "
                                      f"the median node ({typical / 1e9:.0f} GB/s); "
                                      f"{_lowest(links, nodes[first])}")
                    if value < NVLINK_SEVERE_FRACTION * typical:
                        severe[first] = "under a tenth of the median node"
        unseen = {first for first, value in per_node.items() if is_missing(value)}
        return self.holds["nvlink"].update(frame.time, holding, severe,
                                           unseen=EVERY_KEY if is_missing(typical) else unseen)

    def _hardware(self, frame: Frame, up: Sequence[bool], silent: frozenset[int]
                  ) -> list[Anomaly]:
        ecc: dict[object, str] = {}
        for rank, count in enumerate(frame.values.get("ecc_dbe", ())):
            if not is_missing(count) and count > 0:
                ecc[rank] = f"{count:.0f} uncorrectable (double-bit) ECC error(s)"
        xids: dict[object, str] = {}
        critical: dict[object, str] = {}
        codes: dict[object, str] = {}
        for rank, code in enumerate(frame.values.get("xid", ())):
            if not is_missing(code) and code > 0:
                codes[rank] = f"{code:.0f}"
                text = f"XID {code:.0f}: {xid_meaning(int(code))}"
                (critical if int(code) in CRITICAL_XIDS else xids)[rank] = text
        ecc, xids, critical, codes = (
            self._still_gone(frame.time, name, found, up) for name, found in (
                ("ecc", ecc), ("xid", xids), ("xid_critical", critical), ("xid_codes", codes)))
        self._faults = {"ecc": ecc, "xid": xids, "xid_critical": critical, "xid_codes": codes}
        self._was_up = tuple(up)
        no_ecc = gpu_unknown(frame, "ecc_dbe", silent)
        no_xid = gpu_unknown(frame, "xid", silent)
        return [*self.holds["ecc"].update(frame.time, ecc, unseen=no_ecc),
                *self.holds["xid"].update(frame.time, xids, figures=codes, unseen=no_xid),
                *self.holds["xid_critical"].update(frame.time, critical, figures=codes,
                                                   unseen=no_xid)]

    def _still_gone(self, now: float, name: str, found: dict[object, str],
                    up: Sequence[bool]) -> dict[object, str]:
        """``found``, and the faults of last poll on ranks that are down now: a GPU that
        reported an XID and then vanished has not recovered, its series are only gone;
        and once its rank is back, a fault no restart mends (``core.detect.lasting``)."""
        before = self._faults.get(name, {})
        kept = {rank: text for rank, text in before.items()
                if rank not in found and isinstance(rank, int) and rank < len(up)
                and not up[rank]}
        lasting = self.lasting.update(now, name, found, before,
                                      self._faults.get(FIGURES, {}), self._was_up, up)
        return {**found, **lasting, **kept}

    # -- the whole job -----------------------------------------------------------------

    def _loss_divergence(self, frame: Frame) -> list[Anomaly]:
        loss = frame.job.get("loss", float("nan"))
        if is_missing(loss):
            return self.holds["loss"].update(frame.time, {}, unseen=EVERY_KEY)
        outside = self.loss.judge(frame.time, loss)
        return self.holds["loss"].update(frame.time, {None: outside} if outside else {})

    def _throughput(self, frame: Frame) -> list[Anomaly]:
        tokens = frame.job.get("tokens_per_s", float("nan"))
        if is_missing(tokens):
            return self.holds["throughput"].update(frame.time, {}, unseen=EVERY_KEY)
        since_stall = self._since_stall(frame.time)
        if since_stall >= RATE_WINDOW_SECONDS:  # a stall's rates are not the job's usual one
            _push(self._tokens, frame.time, tokens, self.s.throughput_window_seconds)
        typical = median(v for _, v in self._tokens) if self._tokens else 0.0
        holding: dict[object, str] = {}
        low = typical > 0 and tokens < self.s.throughput_fraction * typical
        # during a job stall a low rate is the stall's, shown beside it; just after it, a rate
        # that still covers the stall says nothing new
        if low and not 0 < since_stall < RATE_WINDOW_SECONDS:
            holding[None] = (f"{tokens / 1e6:.2f} M tokens/s, {tokens / typical:.2f}x the "
                             f"recent median ({typical / 1e6:.2f} M)")
        return self.holds["throughput"].update(frame.time, holding)

    def _since_stall(self, now: float) -> float:
        """Seconds since the last poll with a job stall (0: this one; inf: none seen)."""
        return float("inf") if self._stalled_at is None else now - self._stalled_at


def _lowest(links: Sequence[float], ranks: Sequence[int], shown: int = 3) -> str:
    """"lowest: rank 300 12 GB/s, rank 301 14 GB/s": the node's GPUs, worst first."""
    present = sorted((_at(links, r), r) for r in ranks if not is_missing(_at(links, r)))
    return "lowest: " + ", ".join(f"rank {r} {v / 1e9:.0f} GB/s" for v, r in present[:shown])


def _nodes(rank_map: RankMap) -> dict[int, list[int]]:
    """Each node's ranks, by the node's first rank (how a node-wide anomaly is placed)."""
    by_node: dict[int, list[int]] = {}
    for rank in rank_map.ranks:
        if rank.node >= 0:
            by_node.setdefault(rank.node, []).append(rank.rank)
    return {ranks[0]: ranks for ranks in by_node.values()}


def _at(values: Sequence[float] | None, rank: int) -> float:
    return values[rank] if values is not None and rank < len(values) else float("nan")


def _push(window: deque[tuple[float, float]], now: float, value: float, seconds: float) -> None:
    window.append((now, value))
    while window and window[0][0] < now - seconds:
        window.popleft()
