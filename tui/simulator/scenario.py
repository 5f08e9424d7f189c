"""The simulated cluster's script: which faults happen to which rank, and when.

A scenario is a TOML file (``config/scenario.toml`` by default) holding a few job-wide
numbers and one ``[[fault]]`` table per fault. Loading checks everything up front, so a
bad file gives one ScenarioError naming the file, the key and what is wrong.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.parallelism import parse as parse_parallelism
from ..settings.paths import shipped_config_dir
from ..settings.reader import ConfigError, read_toml
from .rotation import MODES as ROTATION_MODES

CHECKPOINT_EVERY_STEPS = 100  # the demo's loop makes ~270 steps: two or three saves a loop


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message says where and why."""


@dataclass(frozen=True)
class Fault:
    """One scripted fault: ``effect`` on ``rank`` (None = the whole job) for a while."""

    effect: str
    rank: int | None
    start: float
    duration: float
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def end(self) -> float:
        return self.start + self.duration

    def active_at(self, loop_time: float) -> bool:
        return self.start <= loop_time < self.end


@dataclass(frozen=True)
class Tenant:
    """Another job with GPUs on the node of ``rank``: ``gpus`` of them, after the job's own."""

    rank: int
    name: str  # its HPC job id on bare metal, its pod's name on Kubernetes
    namespace: str
    gpus: int


@dataclass(frozen=True)
class Scenario:
    """A looping script of faults over a synchronous training job."""

    name: str
    loop_seconds: float
    base_step_seconds: float
    tokens_per_step: int
    faults: tuple[Fault, ...]
    parallelism: str = ""  # "tp=8,pp=4": where stage and replica faults fall
    log_layout: str = "torchrun"  # how the ranks' logs are laid out (LOG_LAYOUTS)
    tenants: tuple[Tenant, ...] = ()  # other jobs sharing the job's nodes
    checkpoint_every_steps: int = CHECKPOINT_EVERY_STEPS  # the job saves a checkpoint so often


def _positive_number(value: object) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) and value > 0 else None


def _non_negative_number(value: object) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) and value >= 0 else None


def _positive_int(value: object) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool)
    return value if ok and value > 0 else None


def _boolean(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _stage(value: object) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool)
    return value if ok and value >= -1 else None


def _rotation_mode(value: object) -> str | None:
    return value if value in ROTATION_MODES else None


def _dump_format(value: object) -> str | None:
    return value if value in DUMP_FORMATS else None


def _hang_cause(value: object) -> str | None:
    return value if value in HANG_CAUSES else None


# torchrun: torchrun --log-dir trees, a stdout.log and a stderr.log a rank;
# nccl_files: one file a process named as NCCL_DEBUG_FILE=nccl.%h.%p.log names it, holding
# everything the process writes (NCCL's lines, PyTorch's, its progress).
LOG_LAYOUTS = ("torchrun", "nccl_files")
DUMP_FORMATS = ("pickle", "json", "none")  # how the ranks write their Flight Recorder dumps
HANG_CAUSES = ("missing", "mismatch")
_DUMPS = ("pickle", _dump_format, '"pickle", "json" or "none"')


# effect -> (needs a rank, {param: (default, parser returning None if invalid, rule)})
EFFECTS: dict[str, tuple[bool, dict[str, tuple[Any, Any, str]]]] = {
    "thermal_throttle": (True, {}),
    "straggler": (True, {"factor": (1.45, _positive_number, "a number > 0")}),
    "nvlink_drop": (True, {"factor": (0.3, _positive_number, "a number > 0")}),
    "rank_death": (True, {"dumps": _DUMPS,
                          "others_step": (0.0, _non_negative_number, "a number >= 0")}),
    "collective_hang": (True, {"cause": ("missing", _hang_cause, '"missing" or "mismatch"'),
                               "dumps": _DUMPS}),
    "ecc_dbe": (True, {"remap_failure": (False, _boolean, "true or false")}),
    "xid": (True, {"code": (79, _positive_int, "a whole number > 0")}),
    "job_stall": (False, {}),
    "stage_imbalance": (False, {
        "stage": (-1, _stage, "a whole number >= 0, or -1 for the last stage"),
        "factor": (1.25, _positive_number, "a number > 0"),
    }),
    "replica_slow": (True, {"factor": (1.3, _positive_number, "a number > 0")}),
    "data_imbalance": (False, {"factor": (1.3, _positive_number, "a number > 0")}),
    "job_slowdown": (False, {"factor": (1.2, _positive_number, "a number > 0")}),
    "loss_divergence": (False, {}),
    "log_rotation": (True, {
        "mode": ("copytruncate", _rotation_mode, '"copytruncate" or "rename"'),
        "nodes": (1, _positive_int, "a whole number > 0"),
    }),
}

_TOP_KEYS = ("name", "loop_seconds", "base_step_seconds", "tokens_per_step", "fault",
             "parallelism", "log_layout", "tenant", "checkpoint_every_steps")
NEEDS_PARALLELISM = ("stage_imbalance", "replica_slow")
_FAULT_KEYS = ("effect", "rank", "start", "duration")
_TENANT_KEYS = ("rank", "name", "namespace", "gpus")
TENANT_NAMESPACE = "default"  # a tenant's namespace when the scenario names none


def default_scenario_path() -> Path:
    return shipped_config_dir() / "scenario.toml"


def load_scenario(path: Path | None = None) -> Scenario:
    """Read and check a scenario file; raise ScenarioError on anything wrong."""
    path = default_scenario_path() if path is None else Path(path)
    try:
        data = read_toml(path)
    except ConfigError as error:  # it names the file and says why
        raise ScenarioError(str(error)) from None
    return _Checker(path).scenario(data)


class _Checker:
    """Turns parsed TOML into a Scenario, naming the file and key in every error."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, problem: str) -> ScenarioError:
        return ScenarioError(f"{self.path}: {key}: {problem}")

    def unknown_keys(self, table: dict[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                known = ", ".join(allowed) or "none"
                raise self.fail(f"{prefix}{key}", f"unknown key{hint}; known keys: {known}")

    def required(self, table: dict[str, Any], key: str, prefix: str) -> Any:
        if key not in table:
            raise self.fail(f"{prefix}{key}", "missing key")
        return table[key]

    def number(self, table: dict[str, Any], key: str, prefix: str, allow_zero: bool) -> float:
        value = self.required(table, key, prefix)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(f"{prefix}{key}", f"must be a number, got {value!r}")
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            rule = ">= 0" if allow_zero else "> 0"
            raise self.fail(f"{prefix}{key}", f"must be a finite number {rule}, got {value!r}")
        return float(value)

    def scenario(self, data: dict[str, Any]) -> Scenario:
        self.unknown_keys(data, _TOP_KEYS, "")
        name = self.required(data, "name", "")
        if not isinstance(name, str) or not name.strip():
            raise self.fail("name", f"must be a non-empty string, got {name!r}")
        loop = self.number(data, "loop_seconds", "", allow_zero=False)
        base_step = self.number(data, "base_step_seconds", "", allow_zero=False)
        tokens = _positive_int(self.required(data, "tokens_per_step", ""))
        if tokens is None:
            raise self.fail("tokens_per_step", f"must be a whole number > 0, got "
                            f"{data['tokens_per_step']!r}")
        tables = data.get("fault", [])
        if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
            raise self.fail("fault", "must be a list of [[fault]] tables")
        faults = tuple(self.fault(table, i, loop) for i, table in enumerate(tables))
        parallelism = data.get("parallelism", "")
        try:
            if not isinstance(parallelism, str):
                raise ValueError(f"must be a string like \"tp=8,pp=4\", got {parallelism!r}")
            parse_parallelism(parallelism)
        except ValueError as error:
            raise self.fail("parallelism", str(error)) from None
        needing = next((f.effect for f in faults if f.effect in NEEDS_PARALLELISM), None)
        if needing and not parallelism.strip():
            raise self.fail("parallelism", f"{needing} needs the job's parallelism, "
                                           'e.g. parallelism = "tp=8,pp=4"')
        layout = data.get("log_layout", "torchrun")
        if layout not in LOG_LAYOUTS:
            raise self.fail("log_layout", f"must be one of {', '.join(LOG_LAYOUTS)}, got "
                                          f"{layout!r}")
        every = _positive_int(data.get("checkpoint_every_steps", CHECKPOINT_EVERY_STEPS))
        if every is None:
            raise self.fail("checkpoint_every_steps", "must be a whole number > 0, got "
                                                      f"{data['checkpoint_every_steps']!r}")
        return Scenario(name.strip(), loop, base_step, tokens, faults, parallelism, layout,
                        self.tenants(data.get("tenant", [])), every)

    def tenants(self, tables: object) -> tuple[Tenant, ...]:
        if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
            raise self.fail("tenant", "must be a list of [[tenant]] tables")
        return tuple(self.tenant(table, f"tenant[{i}].") for i, table in enumerate(tables))

    def tenant(self, table: dict[str, Any], prefix: str) -> Tenant:
        self.unknown_keys(table, _TENANT_KEYS, prefix)
        rank = self.rank(table, prefix, "tenant", needs=True)
        assert rank is not None
        name = self.text(self.required(table, "name", prefix), f"{prefix}name")
        namespace = self.text(table.get("namespace", TENANT_NAMESPACE), f"{prefix}namespace")
        gpus = _positive_int(table.get("gpus", 1))
        if gpus is None:
            raise self.fail(f"{prefix}gpus", f"must be a whole number > 0, got "
                            f"{table['gpus']!r}")
        return Tenant(rank, name, namespace, gpus)

    def text(self, value: object, key: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string, got {value!r}")
        return value.strip()

    def fault(self, table: dict[str, Any], index: int, loop: float) -> Fault:
        prefix = f"fault[{index}]."
        effect = self.required(table, "effect", prefix)
        if not isinstance(effect, str) or effect not in EFFECTS:
            raise self.fail(f"{prefix}effect", f"unknown effect {effect!r}; known effects: "
                            + ", ".join(EFFECTS))
        needs_rank, param_rules = EFFECTS[effect]
        self.unknown_keys(table, _FAULT_KEYS + tuple(param_rules), prefix)
        rank = self.rank(table, prefix, effect, needs_rank)
        start = self.number(table, "start", prefix, allow_zero=True)
        if start >= loop:
            raise self.fail(f"{prefix}start", f"{start:g} is past the loop end "
                            f"(loop_seconds = {loop:g})")
        duration = self.number(table, "duration", prefix, allow_zero=False)
        if start + duration > loop:
            raise self.fail(f"{prefix}duration", f"the fault ends at {start + duration:g}, "
                            f"past the loop end (loop_seconds = {loop:g})")
        params = {}
        for key, (default, parse, rule) in param_rules.items():
            params[key] = parse(table.get(key, default))
            if params[key] is None:
                raise self.fail(f"{prefix}{key}", f"must be {rule}, got {table[key]!r}")
        return Fault(effect, rank, start, duration, params)

    def rank(self, table: dict[str, Any], prefix: str, effect: str, needs: bool) -> int | None:
        if not needs:
            if "rank" in table:
                raise self.fail(f"{prefix}rank", f"{effect} hits the whole job; remove rank")
            return None
        value = self.required(table, "rank", prefix)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(f"{prefix}rank", f"must be a whole number >= 0, got {value!r}")
        return value
