"""Configuration as text: tables written as TOML a user can paste, and a new config file
written without ever replacing one that exists."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class FileExists(Exception):
    """The config file is there already: it is the user's, and is never overwritten."""


def toml_text(tables: Mapping[str, Mapping[str, Any]]) -> str:
    """``{"ranks": {"rank_label": "rank"}, "metrics": {"step_time": {...}}}`` as TOML: a
    ``[table]`` per table, ``[table.sub]`` for a table of tables, in the order given."""
    blocks = []
    for name, table in tables.items():
        plain = {k: v for k, v in table.items() if not isinstance(v, Mapping)}
        if plain:
            blocks.append(_block(name, plain))
        for sub, inner in table.items():
            if isinstance(inner, Mapping):
                blocks.append(_block(f"{name}.{_key(sub)}", inner))
    return "\n".join(blocks)


def _block(header: str, values: Mapping[str, Any]) -> str:
    lines = [f"[{header}]"]
    lines.extend(f"{_key(key)} = {_value(value)}" for key, value in values.items())
    return "\n".join(lines) + "\n"


def _key(key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum() and key.isascii()
    return key if bare else _value(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    # A JSON string is a TOML basic string: quotes, backslashes and controls escaped.
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")


def write_new(path: Path, text: str) -> None:
    """Create ``path`` (and its folder) holding ``text``; FileExists if it is there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("x", encoding="utf-8") as file:
            file.write(text)
    except FileExistsError:
        raise FileExists(f"{path} exists: it is yours, and is never overwritten") from None
    os.chmod(path, 0o600)  # it may come to hold a user name or a tenant
