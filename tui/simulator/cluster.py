"""A simulated synchronous training job: every rank's GPU and job metrics, with scripted faults.

The demo mode and ``ranktop simulate`` draw from this. A frame is a pure function of
(nodes, gpus_per_node, seed, scenario, t), so two calls with the same arguments agree.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field, replace

from ..core.domain import THERMAL_BITS
from ..core.model import MISSING, Frame, RankMap
from ..core.parallelism import fit_world
from ..core.parallelism import parse as parse_parallelism
from ..core.xid import (
    RECOVERY_DRAIN_AND_RESET,
    RECOVERY_GPU_RESET,
    RECOVERY_NONE,
    xid,
)
from .hardware import COUNTERS, ErrorCounters
from .scenario import Fault, Scenario, load_scenario

GPU_MODEL = "NVIDIA H100 80GB HBM3"

# Healthy H100-like readings.
SM_ACTIVE = 88.0
GPU_UTIL = 99.0
TEMPERATURE = 62.0
POWER = 650.0
SM_CLOCK = 1980.0
NVLINK = 150e9  # bytes/s each way
MEMORY = 71000.0  # MiB
COMPUTE_SHARE = 0.80 / 1.12  # of a healthy step, the time spent outside collectives
BUS_BANDWIDTH = 360.0  # GB/s, NCCL's bus bandwidth of a healthy step's collectives

HOT_TEMP = 88.0
THROTTLE_TEMP = 84.0
RAMP_SECONDS = 15.0
THROTTLED_CLOCK = 1400.0
THROTTLED_POWER = 520.0
THROTTLED_SLOWDOWN = 1.3
NVLINK_DROP_SLOWDOWN = 1.08

FIRST_STEP = 120_000  # the demo joins a job already well into pretraining
TICKS_PER_SECOND = 10
HANG_EFFECTS = ("rank_death", "collective_hang", "job_stall")
IB_ERRORS = (40, 200)  # InfiniBand errors in the window, on a replica whose link is bad

METRICS = (
    "sm_active", "gpu_util", "temperature", "power", "sm_clock", "throttle_reasons",
    "nvlink_tx", "nvlink_rx", "nvlink", "memory_used", "ecc_dbe", "xid", "recovery_action",
    "step_time", "compute_time", "collective_time", "bus_bandwidth", *COUNTERS,
)


@dataclass(frozen=True)
class _JobState:
    """What the whole job is doing at one moment of the loop, without noise."""

    mode: str  # "running", "hung" (a rank died inside an all-reduce) or "stalled"
    step_time: float  # the last completed step's duration, as reported
    pace: float  # seconds per step of progress; inf while hung or stalled
    slowdown: dict[int, float] = field(default_factory=dict)  # compute multiplier per slow rank
    since: float = 0.0  # seconds since the hang or stall began
    job_factor: float = 1.0  # the whole job's step is this much slower (fail-slow)
    imbalance: float = 1.0  # one rank per step, a different one each, computes this much longer


class SimCluster:
    """Every rank of a simulated job, polled as Frames at any time t."""

    def __init__(
        self,
        nodes: int = 64,
        gpus_per_node: int = 8,
        seed: int = 0,
        scenario: Scenario | None = None,
        first_node: int = 0,
    ) -> None:
        """``first_node``: the number of its first node's host name (a fleet's jobs are on
        nodes of their own)."""
        if nodes < 1 or gpus_per_node < 1:
            raise ValueError("a simulated cluster needs at least one node and one GPU per node")
        self.scenario = scenario if scenario is not None else load_scenario()
        self.job_name = self.scenario.name
        self._seed = seed
        grid = RankMap.grid(host_names(nodes, first_node), gpus_per_node, source="simulated")
        self.rank_map = replace(grid, ranks=tuple(
            replace(r, uuid=gpu_uuid(seed, r.rank)) for r in grid.ranks
        ))
        self._n = len(self.rank_map)
        self._loop = self.scenario.loop_seconds
        self._base = self.scenario.base_step_seconds
        self._compute = self._base * COMPUTE_SHARE
        self._faults = tuple(
            f if f.rank is None else replace(f, rank=f.rank % self._n)
            for f in self.scenario.faults
        )
        self._groups = self._parallel_groups()
        self._exports_ib = any(f.effect == "replica_slow" for f in self._faults)
        self._make_offsets(random.Random(seed))
        self._counters = ErrorCounters(self.rank_map, self._faults, self._loop, seed)
        self._progress = self._integrate_steps()

    def _parallel_groups(self) -> dict[str, list[list[int]]]:
        """The ranks of each pipeline stage and each data-parallel replica, by the
        scenario's parallelism (none without one)."""
        if not self.scenario.parallelism:
            return {"stage": [], "replica": []}
        p = fit_world(parse_parallelism(self.scenario.parallelism), self._n)
        stages: list[list[int]] = [[] for _ in range(p.stages)]
        replicas: list[list[int]] = [[] for _ in range(p.replicas)]
        for rank in range(self._n):
            stages[p.stage(rank)].append(rank)
            replicas[p.replica(rank)].append(rank)
        for fault in self._faults:
            if fault.effect == "stage_imbalance" and fault.params["stage"] >= p.stages:
                raise ValueError(f"stage_imbalance: stage {fault.params['stage']} is past the "
                                 f"job's {p.stages} stages")
        return {"stage": stages, "replica": replicas}

    def _fault_ranks(self, fault: Fault) -> list[int]:
        """The ranks a fault slows: its rank, its stage or its rank's replica."""
        if fault.effect == "stage_imbalance":
            return self._groups["stage"][fault.params["stage"]]
        if fault.effect == "replica_slow":
            replicas = self._groups["replica"]
            return next(ranks for ranks in replicas if fault.rank in ranks)
        return [fault.rank]

    def _make_offsets(self, rng: random.Random) -> None:
        """Per-GPU quirks that last the whole run: some GPUs run warmer, busier, hungrier."""
        n = range(self._n)
        self._temp_off = [rng.uniform(-4.0, 4.0) for _ in n]
        self._sm_off = [rng.uniform(-2.0, 2.0) for _ in n]
        self._power_off = [rng.uniform(-12.0, 12.0) for _ in n]
        self._memory = [MEMORY + rng.uniform(-500.0, 500.0) for _ in n]
        self._compute_off = [self._compute * (1 + rng.uniform(-0.006, 0.006)) for _ in n]

    @property
    def seed(self) -> int:
        """What the cluster's randomness (and its GPUs' UUIDs) is drawn from."""
        return self._seed

    def active_faults(self, t: float) -> list[Fault]:
        """The faults active at t (taken modulo the loop), each with its rank resolved."""
        loop_time = t % self._loop
        return [f for f in self._faults if f.active_at(loop_time)]

    def pace_at(self, t: float) -> float:
        """Seconds per step of progress at t (inf while the job hangs or stalls)."""
        return self._job_state(t % self._loop, self.active_faults(t)).pace

    def frame_at(self, t: float) -> Frame:
        """Every metric of every rank at t seconds since the demo started."""
        loop_time = t % self._loop
        faults = self.active_faults(t)
        state = self._job_state(loop_time, faults)
        step = self.step_at(t)
        gauges = random.Random(f"{self._seed}:{math.floor(t * TICKS_PER_SECOND)}")
        # Step-time metrics describe the last completed step, so they only change with it.
        per_step = random.Random(f"{self._seed}:step:{step}")
        running = state.mode == "running"
        values = self._running(gauges, state) if running else self._idle(gauges, state)
        values.update(self._step_metrics(per_step, state))
        values.update(self._counters.values(t))
        if self._exports_ib:
            values["ib_errors"] = [0.0] * self._n
        for fault in sorted(faults, key=lambda f: f.effect == "rank_death"):
            self._apply(fault, values, loop_time, gauges)
        return Frame(time=t, values=values, job=self._job(per_step, step, state, loop_time))

    # --- the job as a whole ---------------------------------------------------------------

    def _job_state(self, loop_time: float, faults: list[Fault]) -> _JobState:
        crawl = next((f for f in faults if f.effect == "rank_death"
                      and f.params.get("others_step", 0.0) > 0), None)
        stall = next((f for f in faults if f.effect == "job_stall"), None)
        if crawl is not None and stall is None:  # the others go on without the dead rank
            pace = crawl.params["others_step"]
            return _JobState("running", pace, pace, since=loop_time - crawl.start)
        hang = next((f for f in faults if f.effect in HANG_EFFECTS and f is not crawl), None)
        if hang is not None:
            # The step metrics stay those of the last step that completed, slow ranks and all.
            mode = "stalled" if hang.effect == "job_stall" else "hung"
            frozen, slowdown = self._running_step(max(0.0, hang.start - 0.01))
            if crawl is not None:  # a stall of the job going on without the dead rank
                frozen = crawl.params["others_step"]
            return _JobState(mode, frozen, math.inf, slowdown, since=loop_time - hang.start)
        slowdown = self._slowdown(loop_time, faults)
        job_factor = math.prod(f.params["factor"] for f in faults if f.effect == "job_slowdown")
        imbalance = max((f.params["factor"] for f in faults if f.effect == "data_imbalance"),
                        default=1.0)
        pace = self._step_for(slowdown, faults, job_factor, imbalance)
        step_time = pace
        for stall in self._faults:
            # The first step after a stall took the whole stall to finish.
            if stall.effect == "job_stall" and stall.end <= loop_time < stall.end + pace:
                step_time = stall.duration + pace
        return _JobState("running", step_time, pace, slowdown, job_factor=job_factor,
                         imbalance=imbalance)

    def _slowdown(self, loop_time: float, faults: list[Fault]) -> dict[int, float]:
        slow: dict[int, float] = {}
        for f in faults:
            if f.effect == "thermal_throttle" and loop_time >= self._throttle_onset(f):
                factor = THROTTLED_SLOWDOWN
            elif f.effect in ("straggler", "stage_imbalance", "replica_slow"):
                factor = f.params["factor"]
            else:
                continue
            for rank in self._fault_ranks(f):
                slow[rank] = max(slow.get(rank, 1.0), factor)
        return slow

    def _step_for(self, slowdown: dict[int, float], faults: list[Fault],
                  job_factor: float = 1.0, imbalance: float = 1.0) -> float:
        # Synchronous: the step waits for the slowest rank's compute, then communicates.
        slowest = max(1.0, imbalance, *slowdown.values()) if slowdown else max(1.0, imbalance)
        step = job_factor * (self._compute * slowest + (self._base - self._compute))
        if any(f.effect == "nvlink_drop" for f in faults):
            step *= NVLINK_DROP_SLOWDOWN
        return step

    def _running_step(self, loop_time: float) -> tuple[float, dict[int, float]]:
        """A running job's step time at loop_time, and its slow ranks."""
        state = self._job_state(loop_time, [f for f in self._faults
                                            if f.active_at(loop_time) and
                                            f.effect not in HANG_EFFECTS])
        return state.pace, state.slowdown

    def _integrate_steps(self) -> list[float]:
        """Steps completed since the loop began, at every tick of the loop. The pace holds
        between the ticks at which a fault begins or ends or a hot GPU starts throttling:
        it is worked out once for each such stretch (a fleet job's loop is an hour of
        ticks), and added up tick by tick as before."""
        ticks = math.ceil(self._loop * TICKS_PER_SECOND)
        edges = {_first_tick_from(f.start) for f in self._faults}
        edges |= {_first_tick_from(f.end) for f in self._faults}
        edges |= {_first_tick_from(self._throttle_onset(f)) for f in self._faults
                  if f.effect == "thermal_throttle"}
        starts = sorted({0} | {tick for tick in edges if 0 < tick < ticks})
        done, progress = 0.0, [0.0]
        for first, end in zip(starts, [*starts[1:], ticks], strict=True):
            loop_time = first / TICKS_PER_SECOND
            faults = [f for f in self._faults if f.active_at(loop_time)]
            step = 1 / (TICKS_PER_SECOND * self._job_state(loop_time, faults).pace)
            for _ in range(first, end):
                done += step
                progress.append(done)
        return progress

    def step_at(self, t: float) -> int:
        """The job's step at t seconds since the demo started."""
        loops = math.floor(t / self._loop)
        tick = min(int((t % self._loop) * TICKS_PER_SECOND), len(self._progress) - 1)
        return FIRST_STEP + int(loops * self._progress[-1] + self._progress[tick])

    def _job(self, rng: random.Random, step: int, state: _JobState, loop_time: float
             ) -> dict[str, float]:
        loss = 2.0 + 0.15 * 5000 / (5000 + max(0, step - FIRST_STEP))
        for f in self._faults:
            if f.effect == "loss_divergence" and f.active_at(loop_time):
                loss += 1.2 + 3.3 * (loop_time - f.start) / f.duration
        loss *= 1 + rng.uniform(-0.012, 0.012)
        running = state.mode == "running"
        tokens = self.scenario.tokens_per_step / state.step_time if running else 0.0
        return {"step": float(step), "loss": loss, "tokens_per_s": tokens,
                "checkpoint_step": float(self.checkpoint_step(step))}

    def checkpoint_step(self, step: int) -> int:
        """The step of the job's last checkpoint, saved every ``checkpoint_every_steps``."""
        return step - step % self.scenario.checkpoint_every_steps

    # --- per-rank values --------------------------------------------------------------------

    def _running(self, rng: random.Random, state: _JobState) -> dict[str, list[float]]:
        r = rng.random
        # Ranks that finish early wait in collectives: less SM activity, power and bandwidth.
        busy = self._base * state.job_factor / state.pace
        sm = [min(99.0, (SM_ACTIVE + off) * busy + 2 * r() - 1) for off in self._sm_off]
        for rank, factor in state.slowdown.items():  # the slow ranks are the ones not waiting
            sm[rank] = min(99.0, SM_ACTIVE * factor * busy + 2 * r() - 1)
        power_scale = 0.55 + 0.45 * busy
        link = NVLINK * busy
        values = {
            "sm_active": sm,
            "gpu_util": [98.0 + 2 * r() for _ in sm],
            "temperature": [TEMPERATURE + off + r() - 0.5 for off in self._temp_off],
            "power": [(POWER + off) * power_scale + 16 * r() - 8 for off in self._power_off],
            "sm_clock": [SM_CLOCK - 15 * r() for _ in sm],
            "nvlink_tx": [link * (0.95 + 0.1 * r()) for _ in sm],
            "nvlink_rx": [link * (0.95 + 0.1 * r()) for _ in sm],
        }
        return self._common(values)

    def _idle(self, rng: random.Random, state: _JobState) -> dict[str, list[float]]:
        """Hung in an all-reduce (NCCL kernels spin) or stalled on input (GPUs sit idle)."""
        r = rng.random
        hung = state.mode == "hung"
        sm_low, util_low, power_low = (11.0, 99.9, 242.0) if hung else (2.0, 0.0, 115.0)
        cool_to, tau = (55.0, 30.0) if hung else (45.0, 10.0)
        warm = math.exp(-state.since / tau)
        values = {
            "sm_active": [sm_low + 2 * r() for _ in self._sm_off],
            "gpu_util": [util_low + r() * (0.1 if hung else 1.0) for _ in self._sm_off],
            "temperature": [cool_to + (TEMPERATURE + off - cool_to) * warm + r() - 0.5
                            for off in self._temp_off],
            "power": [power_low + 16 * r() for _ in self._sm_off],
            "sm_clock": [SM_CLOCK - 15 * r() for _ in self._sm_off],
            "nvlink_tx": [2e7 * r() for _ in self._sm_off],
            "nvlink_rx": [2e7 * r() for _ in self._sm_off],
        }
        return self._common(values)

    def _common(self, values: dict[str, list[float]]) -> dict[str, list[float]]:
        tx, rx = values["nvlink_tx"], values["nvlink_rx"]
        values["nvlink"] = [a + b for a, b in zip(tx, rx, strict=True)]
        values["memory_used"] = list(self._memory)
        values["throttle_reasons"] = [0.0] * self._n
        values["ecc_dbe"] = [0.0] * self._n
        values["xid"] = [MISSING] * self._n
        values["recovery_action"] = [float(RECOVERY_NONE)] * self._n
        return values

    def _step_metrics(self, rng: random.Random, state: _JobState) -> dict[str, list[float]]:
        r = rng.random
        step = state.step_time * (1 + 0.02 * (r() - 0.5))
        compute = [c * state.job_factor * (1 + 0.012 * (r() - 0.5)) for c in self._compute_off]
        for rank, factor in state.slowdown.items():
            compute[rank] *= factor
        if state.imbalance > 1:  # this step's long sequences fell on one rank
            compute[rng.randrange(self._n)] *= state.imbalance
        steps = [step * (1 + 0.004 * (r() - 0.5)) for _ in compute]
        # The rest of a step is spent in collectives, waiting for the slowest rank: a
        # straggler waits least, and its peers' collectives (bytes over time) look slower.
        collective = [max(s - c, 1e-3) for s, c in zip(steps, compute, strict=True)]
        healthy = self._base - self._compute
        return {
            "step_time": steps,
            "compute_time": compute,
            "collective_time": collective,
            "bus_bandwidth": [min(1.0, healthy / c) * BUS_BANDWIDTH for c in collective],
        }

    def _apply(self, fault: Fault, values: dict[str, list[float]], loop_time: float,
               rng: random.Random) -> None:
        rank = fault.rank
        if fault.effect == "thermal_throttle":
            self._heat(rank, values, loop_time - fault.start, rng)
            if loop_time >= self._throttle_onset(fault):
                values["throttle_reasons"][rank] = float(THERMAL_BITS)
                values["sm_clock"][rank] = THROTTLED_CLOCK + 20 * rng.random() - 10
                values["power"][rank] = THROTTLED_POWER + 16 * rng.random() - 8
        elif fault.effect == "nvlink_drop":
            node = self.rank_map.ranks[rank].node
            per_node = self.rank_map.gpus_per_node
            for other in range(node * per_node, (node + 1) * per_node):
                for key in ("nvlink_tx", "nvlink_rx", "nvlink", "bus_bandwidth"):
                    values[key][other] *= fault.params["factor"]
        elif fault.effect == "replica_slow":
            for other in self._fault_ranks(fault):
                values["ib_errors"][other] = float(rng.randint(*IB_ERRORS))
        elif fault.effect == "ecc_dbe":
            values["ecc_dbe"][rank] = 1.0
            # The new row is remapped at the next reset; a failed remap needs a drain first.
            failed = fault.params.get("remap_failure")
            action = RECOVERY_DRAIN_AND_RESET if failed else RECOVERY_GPU_RESET
            values["recovery_action"][rank] = float(action)
        elif fault.effect == "xid":
            code = fault.params["code"]
            values["xid"][rank] = float(code)
            known = xid(code)
            values["recovery_action"][rank] = float(known.recovery if known else RECOVERY_NONE)
        elif fault.effect == "rank_death":
            for series in values.values():
                series[rank] = MISSING
        elif fault.effect == "collective_hang" and fault.params.get("cause") == "missing":
            # Frozen outside NCCL: no kernel runs on its GPU while the others' spin.
            values["sm_active"][rank] = 0.4 * rng.random()
            values["gpu_util"][rank] = 0.0
            values["power"][rank] = 95.0 + 8 * rng.random()
            for key in ("nvlink_tx", "nvlink_rx", "nvlink"):
                values[key][rank] = 1e6 * rng.random()

    def _heat(self, rank: int, values: dict[str, list[float]], elapsed: float,
              rng: random.Random) -> None:
        base = TEMPERATURE + self._temp_off[rank]
        ramp = min(1.0, elapsed / RAMP_SECONDS)
        values["temperature"][rank] = base + (HOT_TEMP - base) * ramp + rng.random() - 0.5

    def _throttle_onset(self, fault: Fault) -> float:
        """Loop time at which the heating GPU passes the throttle temperature."""
        base = TEMPERATURE + self._temp_off[fault.rank]
        return fault.start + RAMP_SECONDS * (THROTTLE_TEMP - base) / (HOT_TEMP - base)


def _first_tick_from(loop_time: float) -> int:
    """The first tick whose time (tick / TICKS_PER_SECOND, as the loop reckons it) is at or
    after ``loop_time``."""
    tick = max(0, math.ceil(loop_time * TICKS_PER_SECOND))
    while tick > 0 and (tick - 1) / TICKS_PER_SECOND >= loop_time:
        tick -= 1
    while tick / TICKS_PER_SECOND < loop_time:
        tick += 1
    return tick


def host_names(nodes: int, first: int = 0) -> list[str]:
    """The simulated nodes' host names: gpu-node-000, gpu-node-001, ... from ``first``."""
    width = max(3, len(str(first + nodes - 1)))
    return [f"gpu-node-{n:0{width}d}" for n in range(first, first + nodes)]


def gpu_uuid(seed: int, key: object) -> str:
    """A GPU's UUID, drawn from the seed and what names the GPU (a rank's number)."""
    digest = hashlib.blake2b(f"ranktop-sim:{seed}:{key}".encode(), digest_size=16).hexdigest()
    return f"GPU-{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:]}"
