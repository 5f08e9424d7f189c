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
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    # A JSON string is a TOML basic string: quotes, backslashes and controls escaped.
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")


def check_new(path: Path) -> None:
    """FileExists if ``path`` is there (``write_new`` would refuse it)."""
    if os.path.lexists(path):
        raise _exists(path)


def _exists(path: Path) -> FileExists:
    return FileExists(f"{path} exists: it is yours, and is never overwritten")


def write_new(path: Path, text: str) -> None:
    """Create ``path`` (and its folder) holding ``text``, readable by its owner only (a
    config may come to hold a user name or a tenant; a secret file holds a password);
    FileExists if it is there."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise _exists(path) from None
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        os.fchmod(fd, 0o600)  # whatever the umask
        file.write(text)


def merged(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """``old`` with ``new`` over it, table by table (a key of ``new`` wins)."""
    out = dict(old)
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def backup_of(path: Path) -> Path:
    """The first free ``name.bak`` (``name.bak.2``, …) beside ``path``."""
    for attempt in range(1, 1000):
        candidate = path.with_name(path.name + (".bak" if attempt == 1 else f".bak.{attempt}"))
        if not os.path.lexists(candidate):
            return candidate
    raise _exists(path.with_name(path.name + ".bak"))


def replace_kept(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (owner-only) after keeping what it held in a new backup
    file beside it; the backup's path. Nothing the user had is lost."""
    backup = backup_of(path)
    write_new(backup, path.read_text(encoding="utf-8"))
    staged = path.with_name(f".{path.name}.new")
    if os.path.lexists(staged):
        staged.unlink()
    write_new(staged, text)
    os.replace(staged, path)
    return backup
