"""Reading typed values out of TOML tables, with errors that say where a value came from.

A value may come from a file, an environment variable or a flag; ``provenance`` maps a
dotted key (``display.refresh_seconds``) to where it came from when that is not the file.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from ..core.outside_file import FileTooLarge, NotRegularFile, read_regular

MAX_CONFIG_BYTES = 1_000_000
# No string of the configuration may hold a terminal control (ESC, C1), a bidi control or a
# lone surrogate: it would reach the screen. TAB and line ends are allowed (PromQL spans lines).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f"
                      r"\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


class ConfigError(Exception):
    """A configuration problem, phrased for the user."""


def control_in(text: str) -> str | None:
    """"U+001B at character 4" for the first control character in ``text``, else None."""
    found = _CONTROL.search(text)
    return None if found is None else f"U+{ord(found.group()):04X} at character {found.start() + 1}"


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a dict; every way of failing becomes a ConfigError naming the file.

    Only a regular file of at most a megabyte is read (``read_regular``): a FIFO would block
    and /dev/zero would never end."""
    try:
        return tomllib.loads(read_regular(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except NotRegularFile as error:
        raise ConfigError(f"{path}: {error.strerror}") from None
    except FileTooLarge as error:
        raise ConfigError(f"{path}: {error.strerror}: too large for a config file") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: nested too deeply") from None
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
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None


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
            raise self.fail(key, f"must be a number (got {_short(value)})")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low:g} and {high:g} (got {value:g})")
        return float(value)

    def integer(self, key: str, low: int, high: int) -> int:
        value = self.table.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be a whole number (got {_short(value)})")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low} and {high} (got {value})")
        return value

    def text(self, key: str, default: str | None = None) -> str:
        value = self.table.get(key, default)
        if not isinstance(value, str) or not value:
            raise self.fail(key, f"must be a non-empty string (got {_short(value)})")
        return self._printable(key, value)

    def optional_text(self, key: str) -> str:
        """A string that may be empty or absent ("" then)."""
        value = self.table.get(key, "")
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string (got {_short(value)})")
        return self._printable(key, value)

    def _printable(self, key: str, value: str) -> str:
        where = control_in(value)
        if where is not None:
            raise self.fail(key, f"holds a control character ({where})")
        return value

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.table.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false (got {_short(value)})")
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(key, f"must be a list of non-empty strings (got {_short(value)})")
        return tuple(self._printable(key, v) for v in value)

    def table_of(self, key: str) -> Mapping[str, Any]:
        value = self.table.get(key, {})
        if not isinstance(value, Mapping):
            raise self.fail(key, "must be a table")
        return value


def _short(value: Any) -> str:
    """A wrong value as an error shows it: its repr (which escapes controls), cut short."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."
