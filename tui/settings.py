"""Configuration: shipped defaults, the user's TOML file and flags, merged into one frozen object.

Every error names the file, the key and what is wrong, so the CLI can print it and exit 2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.paths import shipped_config_dir, user_config_file

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

BAD_DIRECTIONS = ("high", "low")


class ConfigError(Exception):
    """A configuration problem, phrased for the user."""


@dataclass(frozen=True)
class MetricDef:
    """How one metric is titled, scaled and judged."""

    id: str
    title: str
    short: str
    unit: str
    scale: tuple[float, float] | None  # None: scale to the job's own baseline
    bad: str
    warn: float | None
    digits: int


@dataclass(frozen=True)
class DemoSettings:
    nodes: int
    gpus_per_node: int
    seed: int


@dataclass(frozen=True)
class Settings:
    refresh_seconds: float
    maps: tuple[str, ...]
    step_alternate: str
    metrics: Mapping[str, MetricDef]
    demo: DemoSettings
    keymap: Mapping[str, str] = field(default_factory=dict)  # binding id -> keys
    config_file: Path | None = None


def load_settings(config_file: Path | None = None, overrides: Mapping[str, Any] | None = None,
                  ) -> Settings:
    """Defaults, then the user's file (``config_file`` or the XDG one), then ``overrides``."""
    default_path = shipped_config_dir() / "default.toml"
    merged = _read_toml(default_path)
    origin = default_path
    user_path = config_file or user_config_file()
    if config_file is not None or user_path.is_file():
        merged = _merge(merged, _read_toml(user_path))
        origin = user_path
    if overrides:
        merged = _merge(merged, overrides)
    return _build(merged, origin, user_path if user_path.is_file() else None)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a TOML file") from None
    except PermissionError:
        raise ConfigError(f"{path}: permission denied") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid UTF-8 text") from None


def _merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


class _Reader:
    """Reads typed values out of one TOML table, naming file and key in errors."""

    def __init__(self, origin: Path, table: Mapping[str, Any], prefix: str) -> None:
        self.origin, self.table, self.prefix = origin, table, prefix

    def fail(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.origin}: {self.prefix}{key}: {problem}")

    def number(self, key: str, low: float, high: float) -> float:
        value = self.table.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise self.fail(key, f"must be a number (got {value!r})")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low:g} and {high:g} (got {value:g})")
        return float(value)

    def integer(self, key: str, low: int, high: int) -> int:
        value = self.table.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be a whole number (got {value!r})")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low} and {high} (got {value})")
        return value

    def text(self, key: str, default: str | None = None) -> str:
        value = self.table.get(key, default)
        if not isinstance(value, str) or not value:
            raise self.fail(key, f"must be a non-empty string (got {value!r})")
        return value

    def table_of(self, key: str) -> Mapping[str, Any]:
        value = self.table.get(key, {})
        if not isinstance(value, Mapping):
            raise self.fail(key, "must be a table")
        return value


def _build(raw: Mapping[str, Any], origin: Path, user_file: Path | None) -> Settings:
    top = _Reader(origin, raw, "")
    display = _Reader(origin, top.table_of("display"), "display.")
    demo = _Reader(origin, top.table_of("demo"), "demo.")
    metrics_table = top.table_of("metrics")
    metrics = {
        name: _metric(_Reader(origin, _table(origin, metrics_table, name), f"metrics.{name}."),
                      name)
        for name in metrics_table
    }
    maps = tuple(display.table.get("maps", ()))
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
        ),
        keymap=_keymap(_Reader(origin, top.table_of("keys"), "keys.")),
        config_file=user_file,
    )


def _keymap(reader: _Reader) -> dict[str, str]:
    """``[keys]``: binding ids to comma-separated keys, e.g. ``"app.pause" = "space"``."""
    return {binding_id: reader.text(binding_id) for binding_id in reader.table}


def _table(origin: Path, parent: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = parent[name]
    if not isinstance(value, Mapping):
        raise ConfigError(f"{origin}: metrics.{name}: must be a table")
    return value


def _metric(reader: _Reader, name: str) -> MetricDef:
    bad = reader.text("bad")
    if bad not in BAD_DIRECTIONS:
        raise reader.fail("bad", f"must be \"high\" or \"low\" (got {bad!r})")
    return MetricDef(
        id=name,
        title=reader.text("title"),
        short=reader.text("short", reader.table.get("title")),
        unit=reader.table.get("unit", "") if isinstance(reader.table.get("unit", ""), str) else "",
        scale=_scale(reader),
        bad=bad,
        warn=reader.number("warn", -math.inf, math.inf) if "warn" in reader.table else None,
        digits=reader.integer("digits", 0, 6) if "digits" in reader.table else 1,
    )


def _scale(reader: _Reader) -> tuple[float, float] | None:
    value = reader.table.get("scale", "auto")
    if value == "auto":
        return None
    numeric = isinstance(value, list) and len(value) == 2 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
    )
    if not numeric or not value[0] < value[1]:
        raise reader.fail("scale", f'must be "auto" or [low, high] with low < high (got {value!r})')
    return float(value[0]), float(value[1])
