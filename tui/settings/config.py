"""Configuration: shipped defaults, the user's TOML file and flags, merged into one frozen object.

Every error names the file, the key and what is wrong, so the CLI can print it and exit 2.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.config_values import DetectSettings, LayoutSettings, MetricDef, MetricQuery
from ..core.hang.checkpoint import checkpoint_pattern
from ..core.parallelism import Parallelism
from ..flight.dump_paths import PatternError, check_pattern
from ..logs.discovery import check_spec
from .bundle import BundleSettings, bundle_settings
from .layout import layout_settings, parallelism_of
from .paths import shipped_config_dir, user_config_file
from .reader import Reader, check_known_keys, merge, read_toml
from .sources import (
    PrometheusSettings,
    RankSettings,
    environment_overrides,
    http_url,
    prometheus_settings,
    rank_settings,
)

BAD_DIRECTIONS = ("high", "low")
WARN_LIMIT = 1e15  # a metric threshold past this (or infinite) is a mistake: nothing reaches it


@dataclass(frozen=True)
class DemoSettings:
    nodes: int
    gpus_per_node: int
    seed: int
    parallelism: Parallelism | None = None  # the demo job's, for `t` (None: not given)


@dataclass(frozen=True)
class Settings:
    refresh_seconds: float
    maps: tuple[str, ...]
    step_alternate: str
    metrics: Mapping[str, MetricDef]
    demo: DemoSettings
    prometheus: PrometheusSettings  # the loader always fills both: "no backend" is an empty url
    ranks: RankSettings
    keymap: Mapping[str, str] = field(default_factory=dict)  # binding id -> keys
    job_metrics: Mapping[str, str] = field(default_factory=dict)  # header value -> PromQL
    detect: DetectSettings = field(default_factory=DetectSettings)
    log_spec: str = ""
    flight_recorder: str = ""  # where the ranks' Flight Recorder dumps are: a pattern
    dump_pipes: str = ""  # the ranks' debug pipes (TORCH_NCCL_DEBUG_INFO_PIPE_FILE)
    request_dumps: bool = False  # whether the evidence screen may write to those pipes
    checkpoint_pattern: str = ""  # a "saved checkpoint" log line ("": the usual trainers')
    alertmanager_url: str = ""
    config_file: Path | None = None
    layout: LayoutSettings = field(default_factory=LayoutSettings)
    bundle: BundleSettings = field(default_factory=BundleSettings)
    utc: bool = False  # times said in UTC, not the local zone


def load_settings(config_file: Path | None = None, overrides: Mapping[str, Any] | None = None,
                  environ: Mapping[str, str] | None = None,
                  flag_names: Mapping[str, str] | None = None) -> Settings:
    """Defaults, then the user's file (``config_file`` or the XDG one), then ``RANKTOP_*``
    variables of ``environ``, then ``overrides`` (from flags, named in ``flag_names``)."""
    environ = os.environ if environ is None else environ
    resolved = resolve(config_file, overrides, environ)
    provenance = {**resolved.provenance, **(flag_names or {})}
    top = Reader(resolved.origin, resolved.table, "", provenance)
    return _build(top, environ, resolved.user_file)


@dataclass(frozen=True)
class Resolved:
    """Every key the settings are read from, merged, before a value is checked."""

    table: dict[str, Any]
    origin: Path  # the file the keys come from, for errors: the user's, else the defaults
    provenance: dict[str, str]  # dotted key -> the variable that set it
    user_file: Path | None  # the user's config file, when there is one


def resolve(config_file: Path | None, overrides: Mapping[str, Any] | None,
            environ: Mapping[str, str]) -> Resolved:
    """The defaults, the user's file, the environment's and the flags' keys, merged."""
    default_path = shipped_config_dir() / "default.toml"
    merged = read_toml(default_path)
    origin = default_path
    user_path = config_file or user_config_file()
    if config_file is not None or user_path.is_file():
        user = read_toml(user_path)
        check_known_keys(user, merged, user_path)
        merged = merge(merged, user)
        origin = user_path
    from_environment, provenance = environment_overrides(environ)
    merged = merge(merged, from_environment)
    if overrides:
        merged = merge(merged, overrides)
    return Resolved(merged, origin, provenance, user_path if user_path.is_file() else None)


def _build(top: Reader, environ: Mapping[str, str], user_file: Path | None) -> Settings:
    display, demo, metrics_reader = top.child("display"), top.child("demo"), top.child("metrics")
    metrics = {name: _metric(metrics_reader.child(name), name) for name in metrics_reader.table}
    maps = display.table.get("maps", ())
    maps = tuple(maps) if isinstance(maps, list) else ()
    if len(maps) != 4 or not all(isinstance(m, str) for m in maps):
        raise display.fail("maps", "must list exactly four metric names")
    for name in (*maps, display.text("step_alternate")):
        if name not in metrics:
            raise display.fail("maps", f"unknown metric {name!r} (known: {', '.join(metrics)})")
    return Settings(
        refresh_seconds=display.number("refresh_seconds", 0.2, 3600),
        maps=maps,
        step_alternate=display.text("step_alternate"),
        metrics=metrics,
        demo=DemoSettings(
            nodes=demo.integer("nodes", 1, 100_000),
            gpus_per_node=demo.integer("gpus_per_node", 1, 64),
            seed=demo.integer("seed", 0, 2**63),
            parallelism=parallelism_of(demo),
        ),
        keymap=_keymap(top.child("keys")),
        prometheus=prometheus_settings(top.child("prometheus"), environ),
        job_metrics=_job_metrics(top.child("job_metrics")),
        detect=_detect(top.child("detect")),
        log_spec=_log_spec(top.child("logs")),
        flight_recorder=_pattern(top.child("logs"), "flight_recorder"),
        dump_pipes=_pattern(top.child("logs"), "dump_pipes"),
        request_dumps=top.child("logs").flag("request_dumps"),
        checkpoint_pattern=_checkpoint_pattern(top.child("logs")),
        alertmanager_url=http_url(top.child("alertmanager"), "url"),
        ranks=rank_settings(top.child("ranks"), environ),
        config_file=user_file,
        layout=layout_settings(top.child("layout")),
        bundle=bundle_settings(top.child("bundle")),
        utc=display.flag("utc"),
    )


def _detect(reader: Reader) -> DetectSettings:
    """Every threshold is a non-negative number; shares and fractions lie within 0..1."""
    values = {}
    for name in DetectSettings.__dataclass_fields__:
        high = 1.0 if name.endswith(("share", "fraction")) else 1e9
        values[name] = reader.number(name, 0, high)
    return DetectSettings(**values)


def _log_spec(reader: Reader) -> str:
    """``[logs] spec``, checked now rather than when a rank screen first looks for files."""
    spec = reader.optional_text("spec")
    try:
        if spec.strip():
            check_spec(spec)
    except ValueError as error:
        raise reader.fail("spec", str(error)) from None
    return spec


def _pattern(reader: Reader, key: str) -> str:
    """``[logs] flight_recorder`` or ``dump_pipes``: a pattern with ``{rank}``, a folder, or
    a prefix."""
    pattern = reader.optional_text(key)
    try:
        if pattern.strip():
            check_pattern(pattern)
    except PatternError as error:
        raise reader.fail(key, str(error)) from None
    return pattern


def _checkpoint_pattern(reader: Reader) -> str:
    """``[logs] checkpoint_pattern``: a regular expression with a group named ``step``."""
    pattern = reader.optional_text("checkpoint_pattern")
    try:
        checkpoint_pattern(pattern)
    except ValueError as error:
        raise reader.fail("checkpoint_pattern", str(error)) from None
    return pattern


def _job_metrics(reader: Reader) -> dict[str, str]:
    return {key: reader.text(key) for key in reader.table}


def _keymap(reader: Reader) -> dict[str, str]:
    """``[keys]``: binding ids to comma-separated keys, e.g. ``"app.pause" = "space"``."""
    return {binding_id: reader.text(binding_id) for binding_id in reader.table}


def _metric(reader: Reader, name: str) -> MetricDef:
    bad = reader.text("bad")
    if bad not in BAD_DIRECTIONS:
        raise reader.fail("bad", f"must be \"high\" or \"low\" (got {bad!r})")
    return MetricDef(
        id=name,
        title=reader.text("title"),
        short=reader.text("short", reader.table.get("title")),
        unit=reader.optional_text("unit"),
        scale=_scale(reader),
        bad=bad,
        warn=reader.number("warn", -WARN_LIMIT, WARN_LIMIT) if "warn" in reader.table else None,
        digits=reader.integer("digits", 0, 6) if "digits" in reader.table else 1,
        queries=_queries(reader),
    )


def _queries(reader: Reader) -> tuple[MetricQuery, ...]:
    promql, shows = reader.texts("promql"), reader.texts("shows")
    if shows and len(shows) != len(promql):
        raise reader.fail("shows", f"must name each of the {len(promql)} promql entries")
    return tuple(MetricQuery(q, s) for q, s in zip(promql, shows or promql, strict=True))


def _scale(reader: Reader) -> tuple[float, float] | None:
    value = reader.table.get("scale", "auto")
    if value == "auto":
        return None
    numeric = isinstance(value, list) and len(value) == 2 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        for v in value
    )
    if not numeric or not value[0] < value[1]:
        raise reader.fail("scale", "must be \"auto\" or [low, high], finite numbers with "
                                   f"low < high (got {value!r:.80})")
    return float(value[0]), float(value[1])
