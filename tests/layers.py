"""The layer table, read statically: every import of every module of ``tui/`` and ``widgets/``
(deferred ones inside functions and ``TYPE_CHECKING`` blocks included), resolved to the room it
reaches and checked against what that room may import.

The run-time contracts (``tests/import_contract.py``) see what importing a module pulls in;
this sees what the source says, so an import inside a function that no test calls is caught
too. ``docs/development.md`` explains the table.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The source folders and the import names they map to (pyproject's package-dir).
FOLDERS = {"tui": "ranktop.tui", "widgets": "ranktop.widgets"}

CORE = "ranktop.tui.core"
# The core's roof: modules at its root that read every group (the per-poll analysis and what
# is made of it). The rest of its root is the floor, which reads only the floor.
CORE_ROOF = ("analysis", "document", "event_times", "findings", "fleet_cells", "journal")
# Libraries a room may or may not use: drawing, the network, NVML.
DRAWING = ("textual", "rich")
NETWORK = ("httpx", "pynvml")

# Each room, from most to least specific prefix: what of ranktop it may import (a prefix
# allows everything under it) and which libraries it must not.
ROOMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    f"{CORE}.detect": ((f"{CORE}.floor", f"{CORE}.detect"), DRAWING + NETWORK),
    f"{CORE}.hang": ((f"{CORE}.floor", f"{CORE}.hang"), DRAWING + NETWORK),
    f"{CORE}.maps": ((f"{CORE}.floor", f"{CORE}.maps"), DRAWING + NETWORK),
    f"{CORE}.advice": ((f"{CORE}.floor", f"{CORE}.detect", f"{CORE}.hang", f"{CORE}.advice"),
                       DRAWING + NETWORK),
    f"{CORE}.roof": ((CORE,), DRAWING + NETWORK),
    f"{CORE}.floor": ((f"{CORE}.floor",), DRAWING + NETWORK),
    "ranktop.tui.logs": ((CORE, "ranktop.tui.logs"), DRAWING + NETWORK),
    "ranktop.tui.flight": ((CORE, "ranktop.tui.flight"), DRAWING + NETWORK),
    "ranktop.tui.settings": ((CORE, "ranktop.tui.logs", "ranktop.tui.flight",
                              "ranktop.tui.settings"), DRAWING + NETWORK),
    "ranktop.tui.simulator": ((CORE, "ranktop.tui.settings", "ranktop.tui.simulator"),
                              DRAWING + NETWORK),
    "ranktop.tui.sources": ((CORE, "ranktop.tui.settings", "ranktop.tui.simulator",
                             "ranktop.tui.sources"), DRAWING),
    "ranktop.tui.engine": ((CORE, "ranktop.tui.sources", "ranktop.tui.logs", "ranktop.tui.flight",
                            "ranktop.tui.settings", "ranktop.tui.bundle", "ranktop.tui.engine"),
                           DRAWING),
    "ranktop.tui.bundle": (("ranktop", CORE, "ranktop.tui.engine", "ranktop.tui.logs",
                            "ranktop.tui.settings", "ranktop.tui.bundle"), DRAWING + NETWORK),
    "ranktop.widgets": ((f"{CORE}.maps", f"{CORE}.floor", "ranktop.widgets"), NETWORK),
    "ranktop.tui.screens": ((CORE, "ranktop.tui.engine", "ranktop.tui.settings",
                             "ranktop.widgets", "ranktop.tui.screens"), NETWORK),
    "ranktop.tui.app": ((CORE, "ranktop.tui.engine", "ranktop.tui.settings", "ranktop.widgets",
                         "ranktop.tui.screens", "ranktop.tui.bundle", "ranktop.tui.app"),
                        NETWORK),
    "ranktop.tui.cli": (("ranktop",), ()),
    "ranktop.tui": (("ranktop.tui",), ()),
}

# Imports that cross the table on purpose, each with its reason.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("ranktop.tui.screens.rank_requests", "ranktop.tui.logs.tail"):
        "the log lines' type the rank screen's workers turn into rows; the engine reads",
    ("ranktop.tui.screens.rank", "ranktop.tui.logs.line_time"):
        "a pure function finding the first line after a moment in lines already read",
    ("ranktop.tui.app.console", "ranktop.tui.sources.base"):
        "the Source type the app is handed to start its engine with; it polls nothing",
}


@dataclass(frozen=True)
class Crossing:
    """One import a room must not make."""

    module: str
    line: int
    imported: str
    why: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.imported}: {self.why}"


def room_of(module: str) -> str:
    """The room of the table ``module`` belongs to (the core's floor and roof told apart)."""
    if module == CORE or module.startswith(CORE + "."):
        rest = module[len(CORE) + 1:].split(".")
        if f"{CORE}.{rest[0]}" in ROOMS and rest[0] not in ("floor", "roof"):
            return f"{CORE}.{rest[0]}"
        return f"{CORE}.roof" if rest[0] in CORE_ROOF else f"{CORE}.floor"
    return max((room for room in ROOMS if module == room or module.startswith(room + ".")),
               key=len, default="")


def imports_of(module: str, source: str, is_package: bool = False) -> Iterable[tuple[int, str]]:
    """(line, module imported) for every import ``source`` makes, anywhere in it."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            # `from . import x` may name a module: judge each name as base.x where that is
            # inside ranktop, and the base itself otherwise.
            if base.startswith("ranktop"):
                for alias in node.names:
                    yield node.lineno, f"{base}.{alias.name}"
            else:
                yield node.lineno, base


def crossings(sources: Mapping[str, tuple[str, bool]]) -> list[Crossing]:
    """Every import in ``sources`` ({module: (text, is_package)}) the table forbids."""
    found = []
    for module, (text, is_package) in sources.items():
        room = room_of(module)
        allowed, banned = ROOMS[room]
        for line, imported in imports_of(module, text, is_package):
            target = _module_named(imported, sources)
            why = _why_not(module, room, allowed, banned, target)
            crossing = Crossing(module, line, target, why)
            if why and crossing not in found:
                found.append(crossing)
    return found


def _module_named(imported: str, sources: Mapping[str, tuple[str, bool]]) -> str:
    """The module an import reaches: `from ..core import ranks` names a module, `from .x import
    Name` a name inside x."""
    if not imported.startswith("ranktop") or imported in sources:
        return imported
    return imported.rpartition(".")[0]


def _why_not(module: str, room: str, allowed: tuple[str, ...], banned: tuple[str, ...],
             target: str) -> str:
    top = target.split(".")[0]
    if top in banned:
        return f"{room} must not use {top}"
    if top != "ranktop":
        return ""
    if target in ("ranktop", "ranktop.tui") or (module, target) in EXCEPTIONS:
        return ""
    reached = room_of(target) or target
    if any(reached == ok or reached.startswith(ok + ".") for ok in allowed):
        return ""
    return f"{room} may import only {', '.join(allowed)}"


def package_sources(root: Path = ROOT) -> dict[str, tuple[str, bool]]:
    """{module: (its text, whether it is a package)} for every module of the source folders."""
    found = {}
    for folder, name in FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            module = ".".join([name, *parts[:-1]] if is_package else [name, *parts])
            found[module] = (path.read_text(), is_package)
    return found
