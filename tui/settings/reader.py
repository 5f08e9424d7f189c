"""Reading typed values out of TOML tables, with errors that say where a value came from.

A value may come from a file, an environment variable or a flag; ``provenance`` maps a
dotted key (``display.refresh_seconds``) to where it came from when that is not the file.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


class ConfigError(Exception):
    """A configuration problem, phrased for the user."""


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a dict; every way of failing becomes a ConfigError naming the file."""
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


def merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``, table by table."""
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


# Tables whose keys are the user's own names (binding ids, header values).
FREE_TABLES = ("keys", "job_metrics")


def check_known_keys(user: Mapping[str, Any], defaults: Mapping[str, Any], path: Path,
                     prefix: str = "") -> None:
    """A key the defaults do not have is a typo until proven otherwise: name it.

    A new ``[metrics.<name>]`` table may use the keys of any shipped metric.
    """
    for key, value in user.items():
        dotted = f"{prefix}{key}"
        if prefix.rstrip(".") in FREE_TABLES:
            continue
        known = defaults.get(key)
        if known is None and prefix == "metrics.":
            known = _union_of_tables(defaults.values())
        if known is None:
            hint = difflib.get_close_matches(key, list(defaults), n=1)
            also = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ConfigError(f"{path}: {dotted}: unknown key{also}")
        if isinstance(value, Mapping) and isinstance(known, Mapping):
            check_known_keys(value, known, path, f"{dotted}.")


def _union_of_tables(tables: Any) -> dict[str, Any]:
    union: dict[str, Any] = {}
    for table in tables:
        if isinstance(table, Mapping):
            union.update(table)
    return union


class Reader:
    """Reads typed values out of one table, naming file (or variable, or flag) and key."""

    def __init__(self, origin: Path, table: Mapping[str, Any], prefix: str = "",
                 provenance: Mapping[str, str] | None = None) -> None:
        self.origin, self.table, self.prefix = origin, table, prefix
        self.provenance = provenance or {}

    def child(self, key: str) -> Reader:
        """The reader of a sub-table (an empty one when absent)."""
        return Reader(self.origin, self.table_of(key), f"{self.prefix}{key}.", self.provenance)

    def fail(self, key: str, problem: str) -> ConfigError:
        where = self.provenance.get(f"{self.prefix}{key}", str(self.origin))
        return ConfigError(f"{where}: {self.prefix}{key}: {problem}")

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

    def optional_text(self, key: str) -> str:
        """A string that may be empty or absent ("" then)."""
        value = self.table.get(key, "")
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string (got {value!r})")
        return value

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.table.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false (got {value!r})")
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(key, f"must be a list of non-empty strings (got {value!r})")
        return tuple(value)

    def table_of(self, key: str) -> Mapping[str, Any]:
        value = self.table.get(key, {})
        if not isinstance(value, Mapping):
            raise self.fail(key, "must be a table")
        return value
