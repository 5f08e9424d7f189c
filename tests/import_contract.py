"""Layer contracts: every module of a package, found by walking it (not from a list), is
imported in a fresh interpreter, and the modules it pulled in are checked against names it
must not import (a name forbids itself and every module under it)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

CHECK = textwrap.dedent("""
    import importlib, json, pkgutil, sys
    package = importlib.import_module(sys.argv[1])
    forbidden = tuple(sys.argv[2].split(","))
    found = {}
    names = [info.name for info in pkgutil.walk_packages(package.__path__, sys.argv[1] + ".")]
    for name in [sys.argv[1], *names]:
        before = set(sys.modules)
        importlib.import_module(name)
        pulled = sorted(m for m in set(sys.modules) - before
                        if any(m == f or m.startswith(f + ".") for f in forbidden))
        if pulled:
            found[name] = pulled
    print(json.dumps({"modules": names, "violations": found}))
""")


def contract_violations(package: str, forbidden: Sequence[str],
                        extra_path: str = "") -> tuple[list[str], dict]:
    """(modules walked, {module: forbidden modules it pulled in}) for ``package``."""
    env_path = [extra_path] if extra_path else []
    code = f"import sys; sys.path[:0] = {env_path!r}\n{CHECK}"
    result = subprocess.run([sys.executable, "-c", code, package, ",".join(forbidden)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    return answer["modules"], answer["violations"]


def planted(root: Path, name: str, clean: str, leaky: str) -> str:
    """A package ``name`` under ``root`` with a clean module and one that imports
    ``leaky``; its folder, for ``extra_path``."""
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "clean.py").write_text(f"import {clean}\n")
    (package / "leaky.py").write_text(f"import {leaky}\n")
    return str(root)


def caught(root: Path, name: str, forbidden: Sequence[str], clean: str,
           leaky: str) -> list[str]:
    """What the contract finds in a planted package ``name`` whose clean module imports
    ``clean`` and whose other imports ``leaky``: the forbidden modules the leaky one pulled
    in, after checking that it alone broke the contract."""
    violations = contract_violations(name, forbidden, planted(root, name, clean, leaky))[1]
    assert list(violations) == [f"{name}.leaky"]
    return violations[f"{name}.leaky"]
